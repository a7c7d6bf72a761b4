import FuzzSupport
@_spi(Fuzzing) import ImageCodec

// Decode → encode (JPEG with the encoder, quality, scans and chroma the first byte picks, and
// PNG) → decode: every image that
// decodes must encode, and read back at the same size (JPEG) or with the same pixels (PNG).
@_cdecl("encode_roundtrip_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        guard let selector = input.first else { return 0 }
        let (options, jpegOptions) = FuzzingEntryPoints.roundTrip(selector: selector)
        guard let bitmap = try? ImageDecoder(options: options).decode(input.dropFirst()) else { return 0 }
        do {
            let jpeg = try ImageEncoder.jpeg(bitmap, options: jpegOptions)
            let png = try ImageEncoder.png(bitmap)
            let fromJPEG = try ImageDecoder().decode(jpeg)
            let fromPNG = try ImageDecoder().decode(png)
            // Pixels and format survive PNG exactly; an ICC profile libpng distrusts is dropped on
            // the way out (by design), so the profile is not compared.
            guard fromJPEG.width == bitmap.width, fromJPEG.height == bitmap.height,
                  fromPNG.format == bitmap.format, fromPNG.pixels == bitmap.pixels else {
                fatalError("round trip changed the image: \(bitmap.width)×\(bitmap.height) \(bitmap.format)")
            }
        } catch {
            fatalError("a decoded image did not survive encoding: \(error)")
        }
        return 0
    }
}
