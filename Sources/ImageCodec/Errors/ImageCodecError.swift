#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything that can go wrong while reading, decoding or encoding an image.
///
/// The codec never traps, exits or prints on data from outside: every failure arrives as one of
/// these cases, with enough detail to tell a user what is wrong with which file, and cases a
/// program can branch on (which format, which `errno`).
public enum ImageCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not a JPEG, PNG, WebP, HEIC, AVIF or GIF this build can decode.
    case unsupportedFormat(UnsupportedFormat)
    /// The library rejected the data; the message is the library's own.
    case corruptData(String)
    /// The data ends before the image does.
    case truncatedData
    /// The image has more pixels than `DecodingLimits.maxPixelCount` (`limit`).
    case tooLarge(width: Int, height: Int, limit: Int)
    /// A side of the image is longer than `DecodingLimits.maxDimension` (`limit`).
    case dimensionTooLarge(width: Int, height: Int, limit: Int)
    /// The file needs more than a limit allows beyond its pixel size: more chunks before a
    /// PNG's pixels than ``DecodingLimits/maxChunksBeforeImageData``, or more memory while
    /// decoding than its plan counts (a header that understates what its data makes the
    /// library hold). The message names which.
    case limitExceeded(String)
    /// An allocation failed while decoding or encoding.
    case outOfMemory
    /// The work runs under a ``MemoryLedger`` whose budget (`capacity` bytes in all) has no room
    /// for `bytes` more: a buffer its plan did not count, or one made outside a plan (a cached
    /// file read for a request) while the budget is full. Nothing is wrong with the image; the
    /// same work fits when the budget has room.
    case memoryBudgetExceeded(bytes: Int, capacity: Int)
    /// Reading or writing `path` failed with `errno` (`ENOENT`, `EACCES`, `EISDIR`, `EFBIG` for a
    /// file over the size limit, ...).
    case io(path: String, errno: Int32)
    /// libjpeg or libpng could not encode the bitmap (the library's message).
    case encodingFailed(String)
    /// The caller passed an argument the codec cannot honour (for example quality 0).
    case invalidArgument(String)
    /// The task the decode or encode ran in was cancelled, and it stopped between rows (see
    /// ``ImageCodecError/checkCancellation()``): nothing is wrong with the image.
    case cancelled

    /// What unsupported bytes were recognised as.
    public enum UnsupportedFormat: Sendable, Hashable, CustomStringConvertible {
        /// No bytes at all (an empty file or body).
        case empty
        /// A Windows bitmap.
        case bmp
        /// A TIFF (or a camera raw file built on TIFF).
        case tiff
        /// Something else (HTML, text, an unknown format).
        case unknown
        /// A JPEG of a kind this build cannot decode (12-bit, lossless, arithmetic-coded), with
        /// libjpeg's message.
        case jpegVariant(String)
        /// A WebP using a feature this libwebp cannot decode, with libwebp's message.
        case webpVariant(String)
        /// A HEIC or AVIF this build cannot decode (a codec or feature libheif lacks), with
        /// libheif's message.
        case heifVariant(String)

        public var description: String {
            switch self {
            case .empty: "empty data"
            case .bmp: "BMP is not supported"
            case .tiff: "TIFF is not supported"
            case .unknown: "not a JPEG, PNG, WebP, HEIC, AVIF or GIF file"
            case .jpegVariant(let message): "JPEG: \(message)"
            case .webpVariant(let message): "WebP: \(message)"
            case .heifVariant(let message): "HEIF: \(message)"
            }
        }
    }

    public var description: String {
        switch self {
        case .unsupportedFormat(let what): "unsupported format: \(what)"
        case .corruptData(let message): "corrupt image data: \(message)"
        case .truncatedData: "truncated image data: the file ends before the image does"
        case .tooLarge(let width, let height, let limit):
            "image too large: \(width)×\(height) exceeds the limit of \(limit) pixels"
        case .dimensionTooLarge(let width, let height, let limit):
            "image too large: \(width)×\(height) has a side longer than the limit of \(limit) pixels"
        case .limitExceeded(let message): "over a decoding limit: \(message)"
        case .outOfMemory: "out of memory"
        case .memoryBudgetExceeded(let bytes, let capacity):
            "over the memory budget: no room for \(bytes) more bytes in a budget of \(capacity)"
        case .io(let path, let code): "\(path): \(Self.reason(code))"
        case .encodingFailed(let message): "encoding failed: \(message)"
        case .invalidArgument(let message): "invalid argument: \(message)"
        case .cancelled: "cancelled before it finished"
        }
    }

    private static func reason(_ code: Int32) -> String {
        switch code {
        case EISDIR: "is a directory, not a file"
        case EFBIG: "file is larger than the limit"
        case ENODEV: "not a regular file"
        default: String(cString: strerror(code))
        }
    }
}
