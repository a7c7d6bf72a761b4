import FuzzSupport
import ImageCodec

// The JPEG header probe: any bytes, a typed error or a header, never a crash, leak or hang.
@_cdecl("jpeg_header_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        _ = try? ImageDecoder.header(of: bytes(data, size), limits: DecodingLimits(maxPixelCount: 4_000_000))
        return 0
    }
}
