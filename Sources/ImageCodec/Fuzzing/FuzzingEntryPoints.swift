import Foundation

/// Internal parsers opened to the fuzz targets in `Fuzz/` (`@_spi(Fuzzing) import ImageCodec`):
/// not API, and absent from the documentation.
@_spi(Fuzzing)
public enum FuzzingEntryPoints {
    /// The EXIF orientation of a TIFF block (`ExifReader`), as its raw value.
    public static func exifOrientation(tiff bytes: [UInt8]) -> Int? {
        ExifReader.orientation(tiff: bytes)?.rawValue
    }

    /// The EXIF orientation of a JPEG APP1 payload ("Exif\0\0" + TIFF), as its raw value.
    public static func exifOrientation(app1 bytes: [UInt8]) -> Int? {
        ExifReader.orientation(app1: bytes)?.rawValue
    }

    /// The options the decode targets take from an input's first byte: partial images on or off
    /// (bit 0), full size or 64, 300 or 1080 px (bits 1-2), grayscale (bit 3), orientation off
    /// (bit 4), the mode (bits 5-6: fit in N×N, or fill, fill-down or force into N×(2N/3), so
    /// crops are decoded too) and a focus point with enlarge (bit 7); limits small enough to keep
    /// each run fast. One definition, so that the regression tests replay a finding with the
    /// options that found it. Inputs from before the mode bits (all zero) keep their meaning.
    public static func decodingOptions(selector: UInt8) -> DecodingOptions {
        let sizes: [Int?] = [nil, 64, 300, 1080]
        let mode = Resize.Mode.allCases[Int(selector >> 5) & 3]
        let resize = sizes[Int(selector >> 1) & 3].map { size in
            mode == .fit
                ? Resize.maxPixelSize(size)
                : Resize(
                    mode: mode, width: size, height: size * 2 / 3, gravity: selector & 128 != 0 ? .focus(x: 0.3, y: 0.8) : .centre,
                    enlarge: selector & 128 != 0)
        }
        return DecodingOptions(
            resize: resize, appliesOrientation: selector & 16 == 0, allowsPartialImages: selector & 1 != 0,
            grayscale: selector & 8 != 0, limits: fuzzingLimits)
    }

    /// The encode round trip's decoding options (128 px; partial images from bit 0) and JPEG
    /// settings, from an input's first byte: quality 1...100, the encoder from bit 1, progressive
    /// from bit 2, the chroma subsampling from the byte / 8.
    public static func roundTrip(selector: UInt8) -> (options: DecodingOptions, jpeg: JPEGEncodingOptions) {
        let subsampling = JPEGEncodingOptions.ChromaSubsampling.allCases[Int(selector / 8) % 3]
        let jpeg = JPEGEncodingOptions(
            quality: 1 + Int(selector) % 100, chromaSubsampling: subsampling, progressive: selector & 4 != 0,
            encoder: selector & 2 != 0 ? .libjpegTurbo : .perceptual)
        return (DecodingOptions(maxPixelSize: 128, allowsPartialImages: selector & 1 != 0, limits: fuzzingLimits), jpeg)
    }

    /// Walks a HEIC or AVIF container as the header read does before libheif, and traps when a
    /// walk that passed reports more than its limits allow: such an input is a finding.
    public static func checkedHEIFContainer(_ data: Data) {
        let limits = fuzzingLimits
        guard let container = try? data.withUnsafeBytes({ (bytes) throws(ImageCodecError) in try HEIFContainer(bytes, limits: limits) })
        else { return }
        let tiles = HEIFContainer.Limits.maxGridTiles + HEIFContainer.Limits.maxOverlayLayers
        precondition(container.codedImages >= 1 && container.codedImages <= 2 * tiles, "\(container.codedImages) coded images passed")
        precondition(container.largestCodedPixels <= limits.maxPixelCount, "a coded image over the pixel limit passed")
        precondition(container.iccProfile.map { $0.count <= limits.maxICCProfileBytes && $0.upperBound <= data.count } ?? true)
        precondition(container.exif.map { $0.upperBound <= data.count } ?? true, "an Exif item past the end passed")
    }

    /// Reads the header as the header targets do, and traps when the read allocated more in the
    /// libraries than `DecodePlan.headerOverheadBytes` beyond twice the profile it keeps: an
    /// input over the bound is a finding, however the process's memory looks.
    public static func boundedHeader(_ data: Data) -> ImageHeader? {
        guard let source = try? ImageSource(data: data, limits: fuzzingLimits) else { return nil }
        checkHeaderBound(source)
        checkedMetadata(source)
        return source.header
    }

    /// The source's metadata, read as an encoder would be given it; traps when what it returns
    /// is not what ``ImageSource/metadata()`` promises (a TIFF block within the limits, upright).
    private static func checkedMetadata(_ source: ImageSource) {
        guard let exif = source.metadata().exif else { return }
        precondition(exif.count <= min(source.limits.maxEXIFBytes, ImageMetadata.maximumEXIFBytes), "an EXIF block of \(exif.count) bytes passed")
        let block = ExifBlock(tiff: exif)
        precondition(block != nil && block?.orientation ?? .up == .up, "the metadata is not an upright TIFF block")
    }

    /// The edits made to an EXIF block (the copyright kept alone, the orientation set upright),
    /// trapping when either gives what it must not: a copyright block that does not read back as
    /// at most the two tags, an upright block of another length or orientation.
    public static func checkEXIFEdits(tiff bytes: [UInt8]) {
        guard let block = ExifBlock(tiff: bytes) else { return }
        let upright = block.settingOrientationUp
        precondition(upright.count == bytes.count && ExifBlock(tiff: upright)?.orientation ?? .up == .up, "the upright edit failed")
        if let copyright = block.copyrightOnly {
            let kept = ExifBlock(tiff: copyright)
            precondition(
                kept.map { (1...2).contains($0.entries.count) && $0.copyrightOnly == copyright } ?? false, "the copyright block does not read back")
        }
    }

    /// Decodes with the options `selector` picks (see `decodingOptions(selector:)`), checking the
    /// header read's bound as `boundedHeader` does. The decode runs under its plan's ceiling; what
    /// libjpeg and libpng allocate after the header read follows from the header alone, so a
    /// decode that hits the ceiling means the plan undercounts: a trap, so the fuzzer reports it.
    public static func boundedDecode(_ data: Data, selector: UInt8) -> DecodedImage? {
        let options = decodingOptions(selector: selector)
        guard let source = try? ImageSource(data: data, limits: options.limits, strict: !options.allowsPartialImages) else { return nil }
        checkHeaderBound(source)
        do throws(ImageCodecError) {
            return try source.decode(options)
        } catch .limitExceeded(let message) where message.hasPrefix("lib") {
            preconditionFailure("the decode passed its plan's ceiling: \(message)")
        } catch {
            return nil
        }
    }

    /// Every frame (at most 16) of an animation, composited and resized with the options the
    /// selector picks, under a ledger: traps when what the frames charged passes the decoder's
    /// ``AnimationDecoder/plannedBytes``, or a frame is not the size the first one was.
    public static func boundedAnimation(_ data: Data, selector: UInt8) -> Int {
        let options = decodingOptions(selector: selector)
        guard let source = try? ImageSource(data: data, limits: options.limits) else { return 0 }
        checkHeaderBound(source)
        let ledger = MemoryLedger(budget: MemoryBudget(capacity: 1 << 40))
        return ledger.charging { () -> Int in
            guard var decoder = try? AnimationDecoder(source: source, options: options, maxFrames: 16) else { return 0 }
            var frames = 0
            var size: (Int, Int)?
            while let frame = try? decoder.next() {
                let bitmap = frame.bitmap
                precondition(size.map { $0 == (bitmap.width, bitmap.height) } ?? true, "frames of different sizes")
                size = (bitmap.width, bitmap.height)
                frames += 1
            }
            precondition(frames <= decoder.frameCount, "more frames than the decoder planned")
            precondition(
                ledger.peakBytesCharged <= decoder.plannedBytes,
                "the frames charged \(ledger.peakBytesCharged) bytes, over the plan's \(decoder.plannedBytes)")
            return frames
        }
    }

    private static func checkHeaderBound(_ source: ImageSource) {
        let bound = DecodePlan.headerOverheadBytes + 2 * min(source.profileBytes, source.limits.maxICCProfileBytes)
        precondition(source.headerPeakBytes <= bound, "the header read allocated \(source.headerPeakBytes) bytes, over its bound of \(bound)")
    }

    private static let fuzzingLimits = DecodingLimits(maxPixelCount: 4_000_000, maxProgressiveScans: 100)
}
