/// The container formats the codec reads and writes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// JPEG (JFIF/EXIF), baseline or progressive.
    case jpeg
    /// PNG, any colour type and bit depth.
    case png
    /// WebP: lossy or lossless, with or without alpha; of an animation, the first frame.
    case webp

    /// File-name extension for outputs in this format.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        }
    }

    /// The media type: `image/jpeg`, `image/png` or `image/webp`.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        }
    }

    /// Identifies the format from the first bytes. Throws `unsupportedFormat` naming what the
    /// bytes look like when they are something else, so users learn why a file was refused.
    public static func sniff(_ bytes: some Collection<UInt8>) throws(ImageCodecError) -> ImageFormat {
        let head = Array(bytes.prefix(12))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.count >= 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) { return .webp }
        if head.isEmpty { throw .unsupportedFormat(.empty) }
        throw .unsupportedFormat(knownOtherFormat(head))
    }

    private static func knownOtherFormat(_ head: [UInt8]) -> ImageCodecError.UnsupportedFormat {
        func ascii(_ range: Range<Int>) -> String? {
            guard head.count >= range.upperBound else { return nil }
            return String(decoding: head[range], as: UTF8.self)
        }
        if ascii(0..<3) == "GIF" { return .gif }
        if ascii(4..<8) == "ftyp" { return .heif }
        if ascii(0..<2) == "BM" { return .bmp }
        if head.starts(with: [0x49, 0x49, 0x2A, 0x00]) || head.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return .tiff
        }
        return .unknown
    }
}
