import URLSigning
import Foundation
import ImageCodec

/// A request path checked and parsed: what to make, from which source, under which cache key.
/// The checks run in the order the status codes promise: signature (403) before anything
/// else, then options (400), expiry (410), output size (400), source (404).
struct ProcessingJob: Sendable {
    let options: ProcessingOptions
    let source: URL
    /// The service's longest output side.
    let maxOutputSide: Int
    /// The instance decodes JPEGs at the smallest DCT scale that covers the output
    /// (`--fast-shrink-on-load`): other pixels, so other keys and other ETags.
    let fastShrinkOnLoad: Bool
    /// The instance's JPEG encoder: the old one makes other bytes, so other keys and ETags.
    let jpegEncoder: JPEGEncodingOptions.Encoder
    let maxAnimationFrames: Int
    /// The format was chosen from `Accept` (`--auto-webp`, no format in the URL): the answer
    /// carries `Vary: Accept`, whichever format it is.
    let negotiatesFormat: Bool
    /// The path was spelled exactly as signed, without a query. Another spelling (`%3A` for
    /// `:`, `http:/` for `http://`, a query) is answered, for clients and proxies that write
    /// it, but `private`: each spelling would be a shared cache's key of its own, and one URL
    /// could fill nginx's or a CDN's cache with copies of one image.
    let isCanonicalSpelling: Bool
    /// The quality the URL asked for (`q:`); nil: the service's default for the format.
    private let requestedQuality: Int?
    private let defaultQuality: Int
    private let defaultWebPQuality: Int
    private let defaultAVIFQuality: Int

    /// Parses `request`'s path (and, with `--auto-webp`, reads its `Accept`).
    init(_ request: ServiceRequest, service: ThumbnailService) throws(ServiceError) {
        try self.init(request, configuration: service.configuration, signer: service.signer)
    }

    /// Parses `request`'s path under `configuration`, checking its signature with `signer`:
    /// no I/O, so the whole path → signature → options → job step can be fuzzed on its own.
    init(_ request: ServiceRequest, configuration: ThumbnailService.Configuration, signer: URLSigner) throws(ServiceError) {
        let path = request.path
        let processing: ProcessingPath
        do {
            processing = try ProcessingPath(path)
        } catch {
            throw configuration.requiresSignature ? .forbidden : .badRequest(error.message)
        }
        if configuration.requiresSignature, !signer.verify(processing.signature, path: processing.signed) { throw .forbidden }
        isCanonicalSpelling = processing.isCanonical(path, query: request.query)

        let contents: (options: [Substring], source: String, extension: String?)
        var options: ProcessingOptions
        do {
            contents = try processing.contents()
        } catch {
            throw .badRequest(error.message)
        }
        do {
            options = try OptionParser.parse(contents.options)
            if let ext = contents.extension { options.format = try OptionParser.format(ext, "extension") }
        } catch {
            throw .badRequest(error.message)
        }
        if let expires = options.expires, Date(timeIntervalSince1970: TimeInterval(expires)) < Date() { throw .expired }
        // The quality the output is made at, so that the result key and the ETag follow it when
        // the service's default changes (WebP's default is keyed with the format, below).
        requestedQuality = options.quality
        (defaultQuality, defaultWebPQuality, defaultAVIFQuality) =
            (configuration.defaultQuality, configuration.defaultWebPQuality, configuration.defaultAVIFQuality)
        options.quality = options.quality ?? configuration.defaultQuality
        negotiatesFormat = (configuration.autoWebP || configuration.autoAVIF) && options.format == nil
        if negotiatesFormat {
            // AVIF first: smaller still, where the client takes it.
            if configuration.autoAVIF, request.accepts("image/avif") {
                options.format = .avif
            } else if configuration.autoWebP, request.accepts("image/webp") {
                options.format = .webp
            }
        }
        // A stretch (a zoom per axis) can make a fit or a force, not a crop.
        if options.stretches, options.resizingType != .fit && options.resizingType != .force || options.minWidth > 0 || options.minHeight > 0 {
            throw .badRequest("z: different zooms per axis apply only to rt:fit and rt:force, without mw: or mh:")
        }
        let (boxWidth, boxHeight) = options.box
        // The canvas adds its padding to the box (an extension never grows past the box).
        let padding = options.canvas.padding
        guard boxWidth + padding.left + padding.right <= configuration.maxOutputSide,
            boxHeight + padding.top + padding.bottom <= configuration.maxOutputSide
        else {
            throw .badRequest("the output would exceed \(configuration.maxOutputSide) pixels a side")
        }
        guard let source = URL(string: contents.source) else { throw .badRequest("the source is not a URL") }
        if let refusal = configuration.sourcePolicy.refusal(of: source) { throw .sourceNotAllowed(refusal) }
        self.options = options
        self.source = source
        maxOutputSide = configuration.maxOutputSide
        fastShrinkOnLoad = configuration.fastShrinkOnLoad
        jpegEncoder = configuration.jpegEncoder
        maxAnimationFrames = configuration.maxAnimationFrames
    }

    /// The canonical options with what else the instance decides about the pixels: the same
    /// in the result key and the ETag.
    var renderOptions: String {
        options.canonical + (fastShrinkOnLoad ? "/shrink-on-load:fast" : "")
            + (jpegEncoder == .perceptual ? "" : "/jpeg-encoder:\(jpegEncoder.rawValue)")
            + (maxAnimationFrames > 1 ? "/animation-frames:\(maxAnimationFrames)" : "")
    }

    /// The result cache's key for an output `format`: canonical options (with the effective
    /// quality, the shrink-on-load mode and the JPEG encoder), the output-size clamp, output format and source,
    /// never the signature or the option spelling.
    func resultKey(_ format: ProcessingOptions.OutputFormat) -> String {
        renderOptions + "/max:\(maxOutputSide)|" + formatKey(format) + "|" + source.absoluteString
    }

    /// The format as keys and ETags name it: WebP or AVIF made at the service's default for
    /// the format (not the URL's quality) says which.
    func formatKey(_ format: ProcessingOptions.OutputFormat) -> String {
        guard requestedQuality == nil, format == .webp || format == .avif else { return format.rawValue }
        return "\(format.rawValue):q\(quality(for: format))"
    }

    /// The quality an output in `format` is encoded at.
    func quality(for format: ProcessingOptions.OutputFormat) -> Int {
        if let requestedQuality { return requestedQuality }
        if let quality = options.formatQuality[format] { return quality }
        return switch format {
        case .webp: defaultWebPQuality
        case .avif: defaultAVIFQuality
        case .jpeg, .png: defaultQuality
        }
    }

    /// The resize a render makes of a source whose upright size is `width × height`: the
    /// options', or, when they ask for none, the clamp to `maxOutputSide`.
    func resize(sourceWidth width: Int, sourceHeight height: Int) -> Resize? {
        Self.resize(options, maxOutputSide: maxOutputSide, sourceWidth: width, sourceHeight: height)
    }

    /// The rule itself, for a render that learns the size only after trimming.
    static func resize(_ options: ProcessingOptions, maxOutputSide: Int, sourceWidth width: Int, sourceHeight height: Int) -> Resize? {
        if let resize = options.resize(sourceWidth: width, sourceHeight: height) { return resize }
        return max(width, height) > maxOutputSide ? .maxPixelSize(maxOutputSide) : nil
    }

    /// Whether a source in `format` is answered as it is (`skp:`): listed, and the URL names
    /// no other output format (with `--auto-webp`, a negotiated WebP is such a format).
    func skipsProcessing(_ format: ImageFormat) -> Bool {
        options.skipProcessing.contains(format) && (options.format == nil || options.format?.codecFormat == format)
    }

    /// `Content-Disposition` for an answer in `format`: `inline` (or `attachment`, `att:`), the
    /// name from `fn:` or the source's last path component, with the format's extension.
    func contentDisposition(_ format: ProcessingOptions.OutputFormat) -> String {
        let stem = options.filename ?? source.deletingPathExtension().lastPathComponent
        return ContentDisposition.value(
            attachment: options.returnsAttachment, filename: (stem.isEmpty || stem == "/" ? "image" : stem) + "." + format.fileExtension)
    }

    /// Identifies the whole answer, whatever format the source turns out to need: the result
    /// keys of every candidate format.
    var flightKey: String { candidateFormats.map(resultKey).joined(separator: "|") }

    /// The keys a result for this job may be under: the format asked for, or with none, either
    /// (which one applies depends on the source, recorded with each result).
    var candidateFormats: [ProcessingOptions.OutputFormat] {
        options.format.map { [$0] } ?? [.jpeg, .png]
    }

    /// True when `image` answers this job: for an explicit format always; without one, only
    /// the format its source resolves to (PNG when it has alpha).
    func accepts(_ image: RenderedImage, as format: ProcessingOptions.OutputFormat) -> Bool {
        options.format != nil || image.sourceHasAlpha == (format == .png)
    }
}
