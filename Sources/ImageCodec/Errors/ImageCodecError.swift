/// Everything that can go wrong while reading, decoding or encoding an image.
///
/// The codec never traps, exits or prints on data from outside: every failure arrives as one of
/// these cases, with enough detail to tell a user what is wrong with which file.
public enum ImageCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not a JPEG or PNG (the associated value names what they look like).
    case unsupportedFormat(String)
    /// The library rejected the data; the message is the library's own.
    case corruptData(String)
    /// The data ends before the image does.
    case truncatedData
    /// The image (or a dimension in its header) exceeds the configured pixel-count limit.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// Reading or writing a file failed.
    case io(path: String, reason: String)
    /// libjpeg or libpng could not encode the bitmap (the library's message).
    case encodingFailed(String)
    /// The caller passed an argument the codec cannot honour (for example quality 0).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .unsupportedFormat(let what): "unsupported format: \(what)"
        case .corruptData(let message): "corrupt image data: \(message)"
        case .truncatedData: "truncated image data: the file ends before the image does"
        case .tooLarge(let width, let height, let limit):
            "image too large: \(width)×\(height) exceeds the limit of \(limit) pixels"
        case .io(let path, let reason): "cannot access \(path): \(reason)"
        case .encodingFailed(let message): "encoding failed: \(message)"
        case .invalidArgument(let message): "invalid argument: \(message)"
        }
    }
}
