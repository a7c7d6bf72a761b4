import Foundation

/// Decodes JPEG, PNG, WebP, HEIC and AVIF data into upright, optionally downsampled 8-bit bitmaps.
///
/// A value type holding only its options: it has no mutable state, so one decoder can be used
/// from any number of tasks at once.
///
/// ```swift
/// let decoder = ImageDecoder(options: DecodingOptions(maxPixelSize: 1080))
/// let thumbnail = try decoder.decode(data)   // e.g. 1080×720, EXIF orientation applied
/// ```
public struct ImageDecoder: Sendable {
    /// Size, orientation, damage tolerance, colour management and limits.
    public var options: DecodingOptions

    /// A decoder with `options` (by default: full size, upright, sRGB, strict).
    public init(options: DecodingOptions = DecodingOptions()) {
        self.options = options
    }

    /// Decodes `data`, resizing (and cropping) at decode time as `options.resize` asks.
    public func decode(_ data: Data) throws(ImageCodecError) -> Bitmap {
        try decodeImage(data).bitmap
    }

    /// Decodes `data` like `decode(_:)`, and also returns the header and the warnings the
    /// decoder tolerated.
    public func decodeImage(_ data: Data) throws(ImageCodecError) -> DecodedImage {
        try source(data).decode(options)
    }

    /// `data`'s header read as this decoder reads it (strictly unless partial images are allowed).
    func source(_ data: Data) throws(ImageCodecError) -> ImageSource {
        try ImageSource(data: data, limits: options.limits, strict: !options.allowsPartialImages)
    }

    /// What decoding `data` would do (output size, DCT scale, peak memory), from its header
    /// alone: cheap enough to call before deciding whether to decode now. `data` may be only
    /// the start of the file, as long as it holds the whole header (else `truncatedData`).
    /// To decode the same bytes afterwards, read them once with ``ImageSource`` instead.
    public func plan(_ data: Data) throws(ImageCodecError) -> DecodePlan {
        try ImageSource(data: data, limits: options.limits).plan(options)
    }

    /// Reads and decodes the file at `url`; a file that cannot be read is an `io` error.
    public func decode(contentsOf url: URL) throws(ImageCodecError) -> Bitmap {
        try decode(FileBytes.read(url, maximumSize: options.limits.maxFileSize))
    }

    /// What colour management has done in this process: transforms built, reused, profiles
    /// found to be sRGB, profiles ignored.
    public static var colorManagementStatistics: ColorManagementStatistics { ColorTransformCache.shared.statistics }

    /// Reads only the header: format, size, orientation, alpha, depth, colour model.
    public static func header(of data: Data, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> ImageHeader {
        try ImageSource(data: data, limits: limits).header
    }

    /// Reads only the header of the file at `url`; an unreadable file is an `io` error.
    public static func header(contentsOf url: URL, limits: DecodingLimits = DecodingLimits()) throws(ImageCodecError) -> ImageHeader {
        try header(of: FileBytes.read(url, maximumSize: limits.maxFileSize), limits: limits)
    }
}

extension Data {
    /// `withUnsafeBytes` that keeps the error type.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(ImageCodecError) -> Result) throws(ImageCodecError) -> Result {
        try withUnsafeBytes { raw in
            Swift.Result { () throws(ImageCodecError) in try body(raw) }
        }.get()
    }
}
