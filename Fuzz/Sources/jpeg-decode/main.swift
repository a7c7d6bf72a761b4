import FuzzSupport
import ImageCodec

// JPEG decoding. The first byte picks the options (partial images on or off, full size or one of
// three target sizes, grayscale, orientation), the rest is the file.
@_cdecl("jpeg_decode_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        guard let selector = input.first else { return 0 }
        let sizes: [Int?] = [nil, 64, 300, 1080]
        let options = DecodingOptions(maxPixelSize: sizes[Int(selector >> 1) & 3], appliesOrientation: selector & 16 == 0,
                                      allowsPartialImages: selector & 1 != 0, grayscale: selector & 8 != 0,
                                      limits: DecodingLimits(maxPixelCount: 4_000_000, maxProgressiveScans: 100))
        _ = try? ImageDecoder(options: options).decodeImage(input.dropFirst())
        return 0
    }
}
