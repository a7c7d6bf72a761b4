import FuzzSupport
@_spi(Fuzzing) import ImageCodec

// Animated WebP: the ANMF walk, libwebp's frames and the compositing. The first byte picks the
// options (as the decode targets'), the rest is the file; every frame (at most 16) is made under
// a ledger, which must stay within the decoder's plan.
@_cdecl("webp_animation_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        guard let selector = input.first else { return 0 }
        _ = FuzzingEntryPoints.boundedAnimation(input.dropFirst(), selector: selector)
        return 0
    }
}
