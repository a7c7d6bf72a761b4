import Foundation
import Locking

/// An encoded JPEG, PNG, WebP, HEIC, AVIF or GIF whose header has been read once: format, size, orientation, and what
/// the engine keeps of its metadata (the first EXIF block, an ICC profile within
/// ``DecodingLimits/maxICCProfileBytes``).
///
/// The library reader that read the header stays open, so that ``plan(_:)`` needs no reader at
/// all and the first ``decode(_:)`` goes on from where the header read stopped instead of
/// parsing the same bytes again. A service that checks a download, plans its memory and then
/// decodes it reads the header once.
///
/// ```swift
/// let source = try ImageSource(data: data)
/// print(source.header.displayWidth, source.header.displayHeight)
/// let options = DecodingOptions(resize: .fill(width: 400, height: 400))
/// let plan = try source.plan(options)           // admit plan.memoryBytes, then:
/// let thumbnail = try source.decode(options).bitmap
/// ```
///
/// Safe to share between tasks: the open reader goes to the first decode; a later or concurrent
/// decode opens its own.
public final class ImageSource: @unchecked Sendable, Equatable {
    /// The encoded bytes.
    public let data: Data
    /// What the header says.
    public let header: ImageHeader
    /// The limits the header was read under.
    public let limits: DecodingLimits
    /// What a plan needs of the header beyond `header`.
    let layout: Layout
    /// Bytes the reader's library held after the header read, kept metadata included: a decode
    /// goes on holding them (counted in every plan).
    let headerBytes: Int
    /// The most the library held during the header read.
    let headerPeakBytes: Int
    /// Size of the ICC profile the header read holds (0: none), or of the chunks it held before
    /// dropping a profile over the limit.
    let profileBytes: Int

    enum Layout: Sendable, Hashable {
        case jpeg(JPEGLayout)
        case png
        /// libwebp keeps no reader between calls: the container scan is the header read.
        case webp(WebPDecoder.Layout)
        case heif(HEIFDecoder.Layout)
        /// giflib keeps no reader between frames: the block walk is the header read.
        case gif(GIFDecoder.Layout)
    }

    private enum Reader {
        case jpeg(JPEGDecompressor)
        case png(PNGReader)
        case heif(HEIFReader)

        /// Whether the reader may decode from `bytes`: libjpeg and libpng are rebased onto
        /// them; libheif reads the bytes it was opened on in place, so only those, unmoved.
        func reads(_ bytes: UnsafeRawBufferPointer) -> Bool {
            guard case .heif(let reader) = self else { return true }
            return reader.reads(bytes)
        }

        /// libheif cannot be counted (no allocator hook): its plan counts the coded data it
        /// gathers for the codec.
        var memory: LibraryMemory {
            switch self {
            case .jpeg(let decompressor): decompressor.memory
            case .png(let reader): reader.memory
            case .heif: LibraryMemory(current: 0, peak: 0, limit: 0)
            }
        }
    }

    /// Guards `reader` and `reads`: every use of the reader happens after taking it out.
    private let lock = Lock()
    private var reader: Reader?
    private var reads = 1

    /// How many times these bytes' header has been read: 1, plus one for each decode that
    /// could not take over the first read's reader.
    var headerReads: Int { lock.withLock { reads } }

    /// True until a decode takes over the header read's reader.
    var holdsReader: Bool { lock.withLock { reader != nil } }

    /// Reads the header of `data` under `limits`. Throws `unsupportedFormat` for bytes that are
    /// not JPEG, PNG, WebP, HEIC, AVIF or GIF, `truncatedData` when the header is cut short, `limitExceeded` for a PNG
    /// with more chunks before its pixels than the limit, and `corruptData` for the rest.
    public convenience init(data: Data, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) {
        try self.init(data: data, limits: limits, strict: true)
    }

    /// `strict: false` tolerates damage warnings in the header read, for a decode that accepts
    /// partial images.
    init(data: Data, limits: DecodingLimits, strict: Bool) throws(ImageCodecError) {
        let format = try ImageFormat.sniff(data)
        let (reader, header, layout) = try data.withBytes { (bytes) throws(ImageCodecError) -> (Reader?, ImageHeader, Layout) in
            switch format {
            case .jpeg:
                let (decompressor, header, layout) = try JPEGDecoder.open(bytes, strict: strict, limits: limits)
                return (.jpeg(decompressor), header, .jpeg(layout))
            case .png:
                let (reader, header) = try PNGDecoder.open(bytes, limits: limits)
                return (.png(reader), header, .png)
            case .webp:
                let (header, layout) = try WebPDecoder.open(bytes, limits: limits)
                return (nil, header, .webp(layout))
            case .heic, .avif:
                let (reader, header, layout) = try HEIFDecoder.open(bytes, format: format, limits: limits)
                return (reader.map(Reader.heif), header, .heif(layout))
            case .gif:
                let (header, layout) = try GIFDecoder.open(bytes, limits: limits)
                return (nil, header, .gif(layout))
            }
        }
        self.data = data
        self.header = header
        self.limits = limits
        self.layout = layout
        let memory = reader?.memory ?? LibraryMemory(current: 0, peak: 0, limit: 0)
        (headerBytes, headerPeakBytes) = (memory.current, memory.peak)
        profileBytes =
            switch (reader, layout) {
            case (.jpeg(let decompressor), _): decompressor.iccProfileBytes
            case (.png(let reader), _): Int(reader.header?.icc_length ?? 0)
            case (_, .heif(let heif)): heif.iccProfile?.count ?? heif.profileBytes
            case (nil, .webp(let webp)): min(webp.container.iccProfile?.count ?? 0, limits.maxICCProfileBytes)
            case (nil, _), (.heif, _): 0
            }
        self.reader = reader
    }

    /// What decoding with `options` would do (output size, DCT scale, peak memory), computed
    /// from the header: no library call, no allocation beyond the result.
    public func plan(_ options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        var plan = try planOne(options)
        // A smart crop or a trim decodes more than once, one after the other: the largest of
        // the decodes is the peak.
        if let analysis = attentionAnalysis(options) {
            plan.memoryBytes = max(plan.memoryBytes, try planOne(analysis.options).memoryBytes + analysis.bytes)
        }
        if let trim = try trimPlan(options) { plan.memoryBytes = max(plan.memoryBytes, trim.memoryBytes) }
        return plan
    }

    /// The upright size `options.region` and `options.resize` apply to: the trim's window once
    /// ``resolvingTrim(_:)`` has found it, else the image (upright unless the options keep the
    /// stored orientation).
    public func size(for options: DecodingOptions) -> (width: Int, height: Int) {
        if let area = options.trimmedArea { return (Int(area.width), Int(area.height)) }
        return options.appliesOrientation ? (header.displayWidth, header.displayHeight) : (header.width, header.height)
    }

    /// The options with `trim` replaced by the window it keeps, found on a decode of its own
    /// (see ``Trim``): what a caller that needs the trimmed size before planning (a fit by the
    /// source's aspect, a minimum width) calls first. ``decode(_:)`` resolves it itself
    /// otherwise. Without `trim`, the options as they are.
    public func resolvingTrim(_ options: DecodingOptions) throws(ImageCodecError) -> DecodingOptions {
        guard let trim = options.trim, let analysis = trimAnalysis(options) else { return options }
        try trim.validate()
        var options = options
        options.trim = nil
        let bitmap = try decodeMeasured(analysis).image.bitmap
        let base = size(for: options)
        guard let window = try trim.window(in: bitmap) else { return options }
        // Back to the image's pixels, keeping every pixel the analysis saw as content.
        let (scaleX, scaleY) = (Double(base.width) / Double(bitmap.width), Double(base.height) / Double(bitmap.height))
        let x0 = Int((window.x * scaleX).rounded(.down)), y0 = Int((window.y * scaleY).rounded(.down))
        let x1 = min(base.width, Int((window.maxX * scaleX).rounded(.up))), y1 = min(base.height, Int((window.maxY * scaleY).rounded(.up)))
        let origin = options.trimmedArea.map { (Int($0.x), Int($0.y)) } ?? (0, 0)
        options.trimmedArea = PixelRect(x: Double(origin.0 + x0), y: Double(origin.1 + y0), width: Double(x1 - x0), height: Double(y1 - y0))
        return options
    }

    /// When the options trim: the decode the window is found on (the whole image, or the
    /// window found before, at full size or twice the box).
    private func trimAnalysis(_ options: DecodingOptions) -> DecodingOptions? {
        guard options.trim != nil else { return nil }
        var analysis = options
        analysis.trim = nil
        analysis.region = nil
        // A minimum size asks for as many pixels as a box side does.
        let side = options.resize.map { max($0.width, $0.height, $0.minimumWidth, $0.minimumHeight) }
        analysis.resize = Trim.analysisSide(boxSide: side).map(Resize.maxPixelSize)
        return analysis
    }

    /// The plan of the decode that finds the trim's window (nil without `trim`): what a caller
    /// that resolves the trim on its own (``resolvingTrim(_:)``) admits for it.
    public func trimPlan(_ options: DecodingOptions) throws(ImageCodecError) -> DecodePlan? {
        try trimAnalysis(options).map { (analysis) throws(ImageCodecError) -> DecodePlan in try planOne(analysis) }
    }

    private func planOne(_ options: DecodingOptions) throws(ImageCodecError) -> DecodePlan {
        let held = headerBytes + ColorPlan.plannedBytes(profileBytes: profileBytes)
        return switch layout {
        case .jpeg(let jpeg): try JPEGDecoder.plan(header, jpeg, heldBytes: held, options: options)
        case .png: try PNGDecoder.plan(header, heldBytes: held, options: options)
        case .webp(let webp): try WebPDecoder.plan(header, webp, heldBytes: held, options: options)
        case .heif(let heif): try HEIFDecoder.plan(header, heif, heldBytes: held, options: options)
        case .gif(let gif): try GIFDecoder.plan(header, gif, heldBytes: held, options: options)
        }
    }

    /// Decodes, resizing (and cropping) at decode time as `options.resize` asks. What the
    /// libraries allocate meanwhile is capped at what `plan(options)` counts for them plus
    /// ``DecodePlan/decodeOverheadBytes``: a file whose data needs more than its header
    /// declares fails with `limitExceeded`.
    public func decode(_ options: DecodingOptions) throws(ImageCodecError) -> DecodedImage {
        try decodeMeasured(options).image
    }

    /// `decode(_:)`, and what the library allocated meanwhile (its peak counts from the header
    /// read's end, so it includes what that read left held). `libraryCeiling` replaces the
    /// plan's ceiling, for tests.
    func decodeMeasured(
        _ options: DecodingOptions, libraryCeiling: Int? = nil
    ) throws(ImageCodecError) -> (image: DecodedImage, memory: LibraryMemory) {
        // Every decode of a render — a trim's, a smart crop's, the image's — starts by looking:
        // a HEIC or AVIF decode cannot be stopped once in libheif or libavif, so a cancelled
        // request must not start the next one.
        try ImageCodecError.checkCancellation()
        let options = try resolvingSmartGravity(resolvingTrim(options))
        let plan = try self.plan(options)
        let ceiling = libraryCeiling ?? plan.memoryBytes + DecodePlan.decodeOverheadBytes
        let kept =
            options.limits == limits
            ? lock.withLock { () -> Reader? in
                defer { reader = nil }; return reader
            } : nil
        var (decoded, memory) = try data.withBytes { (bytes) throws(ImageCodecError) -> (DecodedImage, LibraryMemory) in
            if case .webp(let webp) = layout {
                return (try WebPDecoder.decode(bytes, header, webp, options: options), LibraryMemory(current: 0, peak: 0, limit: 0))
            }
            if case .gif(let gif) = layout {
                return (try GIFDecoder.decode(bytes, header, gif, options: options), LibraryMemory(current: 0, peak: 0, limit: 0))
            }
            // libavif keeps no reader (the decode parses these bytes again): under the header
            // read's limits its container walk holds; under others the header is read again,
            // as for every other format, so the walk runs under those.
            let reader: Reader?
            if let kept, kept.reads(bytes) {
                reader = kept
            } else if case .heif(let heif) = layout, case .libavif = heif.library, options.limits == limits {
                reader = nil
            } else {
                reader = try reopen(bytes, options: options)
            }
            switch (reader, layout) {
            case (.jpeg(let decompressor)?, .jpeg(let layout)):
                decompressor.rebase(bytes)
                decompressor.limitMemory(to: ceiling)
                return (try JPEGDecoder.decode(decompressor, header, layout, options: options), decompressor.memory)
            case (.png(let reader)?, .png):
                reader.rebase(bytes)
                reader.limitMemory(to: ceiling)
                return (try PNGDecoder.decode(reader, header, options: options), reader.memory)
            case (.heif(let reader)?, .heif(let heif)):
                return (try HEIFDecoder.decode(reader, bytes, header, heif, options: options), LibraryMemory(current: 0, peak: 0, limit: 0))
            case (nil, .heif(let heif)):
                return (try HEIFDecoder.decode(nil, bytes, header, heif, options: options), LibraryMemory(current: 0, peak: 0, limit: 0))
            default:
                throw .corruptData("the \(header.format) header changed between reads")
            }
        }
        if options.grayscale { decoded.bitmap = try decoded.bitmap.grayscaled() }
        return (decoded, memory)
    }

    /// The options with ``Gravity/smart`` replaced, in the region's gravity and then in the
    /// resize's, by the focus point ``AttentionFocus`` finds on a small decode: of the whole
    /// image for where the region goes, of the region for where the fill crops.
    func resolvingSmartGravity(_ options: DecodingOptions) throws(ImageCodecError) -> DecodingOptions {
        var options = options
        let upright = size(for: options)
        if var region = options.region, region.gravity == .smart, let analysis = attentionAnalysis(options) {
            var whole = analysis.options
            whole.region = nil
            let size = region.size(sourceWidth: upright.0, sourceHeight: upright.1)
            region.gravity = try AttentionFocus.focus(
                in: try decodeMeasured(whole).image.bitmap,
                crop: (Double(size.width) / Double(max(upright.0, 1)), Double(size.height) / Double(max(upright.1, 1))))
            options.region = region
        }
        if let resize = options.resize, resize.gravity == .smart, resize.width > 0, resize.height > 0,
            var analysis = attentionAnalysis(options)?.options
        {
            analysis.region = options.region
            // The window the fill will crop, from the plan that makes it, as fractions of the area.
            let area = options.region?.size(sourceWidth: upright.0, sourceHeight: upright.1) ?? (upright.0, upright.1)
            let window = ResizePlan(resize, sourceWidth: area.0, sourceHeight: area.1).crop
            let crop = (width: window.width / Double(max(area.0, 1)), height: window.height / Double(max(area.1, 1)))
            let focus = try AttentionFocus.focus(in: try decodeMeasured(analysis).image.bitmap, crop: crop)
            options.resize = resize.with(gravity: focus)
        }
        return options
    }

    /// When the region's or the resize's gravity is ``Gravity/smart``: the small decode that
    /// finds the focus, and what the analysis holds beyond that decode.
    private func attentionAnalysis(_ options: DecodingOptions) -> (options: DecodingOptions, bytes: Int)? {
        guard options.region?.gravity == .smart || options.resize?.gravity == .smart else { return nil }
        var analysis = options
        analysis.resize = .maxPixelSize(AttentionFocus.analysisSide)
        // The 32 × 32 resample of the analysis decode (at most 256 × 256), and the scores.
        let (side, grid) = (AttentionFocus.analysisSide, AttentionFocus.grid)
        let resample = StreamingResampler<SIMD4<Float>>.plannedBytes(
            sourceWidth: side, sourceHeight: side, crop: PixelRect(width: side, height: side), targetWidth: grid, targetHeight: grid,
            format: .rgba)
        return (analysis, resample + 4 * grid * grid * MemoryLayout<SIMD4<Float>>.stride)
    }

    /// Equal when they read the same bytes under the same limits (the header follows from them).
    public static func == (lhs: ImageSource, rhs: ImageSource) -> Bool {
        lhs === rhs || (lhs.limits == rhs.limits && lhs.data == rhs.data)
    }

    /// A reader for a second decode, or one under other limits: the header is read again (an
    /// AVIF's too, which then gives no reader: libavif keeps none).
    private func reopen(_ bytes: UnsafeRawBufferPointer, options: DecodingOptions) throws(ImageCodecError) -> Reader? {
        lock.withLock { reads += 1 }
        switch layout {
        case .jpeg: return .jpeg(try JPEGDecoder.open(bytes, strict: !options.allowsPartialImages, limits: options.limits).0)
        case .png: return .png(try PNGDecoder.open(bytes, limits: options.limits).0)
        case .webp: throw .corruptData("libwebp keeps no reader to reopen")
        case .gif: throw .corruptData("giflib keeps no reader to reopen")
        case .heif: return try HEIFDecoder.open(bytes, format: header.format, limits: options.limits).0.map(Reader.heif)
        }
    }

}
