import FuzzSupport
@_spi(Fuzzing) import ImageCodec

// HEIC and AVIF decoding. The first byte picks the options (partial images on or off, full size or one of
// three target sizes, grayscale, orientation), the rest is the file.
@_cdecl("heif_decode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        guard let selector = input.first else { return 0 }
        _ = FuzzingEntryPoints.boundedDecode(input.dropFirst(), selector: selector)
        return 0
    }
}
