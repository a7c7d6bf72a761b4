import FuzzSupport
@_spi(Fuzzing) import ImageService

// The service's request path without a network: path → signature → options → job → plan, keys
// and cache lifetime (ServiceFuzzing.request). Any bytes: a refusal or a sound job, never a
// trap — the class of bug where one URL's number killed the process.
@_cdecl("service_request_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        ServiceFuzzing.request(bytes(data, size))
        return 0
    }
}
