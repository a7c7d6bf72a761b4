/// The container formats the codec reads and writes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    /// JPEG (JFIF/EXIF), baseline or progressive.
    case jpeg
    /// PNG, any colour type and bit depth.
    case png
    /// WebP: lossy or lossless, with or without alpha; of an animation, the first frame.
    case webp
    /// HEIC: HEIF with HEVC-coded images, as iPhones save photos (read only).
    case heic
    /// AVIF: HEIF with AV1-coded images.
    case avif
    /// GIF (GIF87a, GIF89a), still or animated (read only: a still image's output, or the
    /// frames of an animated WebP).
    case gif

    /// File-name extension for outputs in this format.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        case .heic: "heic"
        case .avif: "avif"
        case .gif: "gif"
        }
    }

    /// The media type: `image/jpeg`, `image/png`, `image/webp`, `image/heic`, `image/avif` or
    /// `image/gif`.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .heic: "image/heic"
        case .avif: "image/avif"
        case .gif: "image/gif"
        }
    }

    /// Identifies the format from the first bytes. Throws `unsupportedFormat` naming what the
    /// bytes look like when they are something else, so users learn why a file was refused.
    public static func sniff(_ bytes: some Collection<UInt8>) throws(ImageCodecError) -> ImageFormat {
        let head = Array(bytes.prefix(12))
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if head.count >= 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) { return .webp }
        if head.count >= 6, head[0..<6].elementsEqual("GIF87a".utf8) || head[0..<6].elementsEqual("GIF89a".utf8) { return .gif }
        if let heif = try heifFormat(Array(bytes.prefix(64))) { return heif }
        if head.isEmpty { throw .unsupportedFormat(.empty) }
        throw .unsupportedFormat(knownOtherFormat(head))
    }

    /// True for the formats ``ImageEncoder`` writes.
    public var isWritable: Bool { self != .heic && self != .gif }

    /// HEIC or AVIF from an ISO-BMFF `ftyp` box: its major brand, else its compatible brands
    /// (`mif1` files name the codec there). Nil for anything else, MP4 video included.
    private static func heifFormat(_ head: [UInt8]) throws(ImageCodecError) -> ImageFormat? {
        guard head.count >= 8, head[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        guard head.count >= 16 else { throw .truncatedData }
        let size = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        let brands = stride(from: 8, to: min(size, head.count) - 3, by: 4).filter { $0 != 12 }.map {
            String(decoding: head[$0..<$0 + 4], as: UTF8.self)
        }
        let avif: Set = ["avif", "avis"]
        let heic: Set = ["heic", "heix", "heim", "heis", "hevc", "hevx"]
        if let major = brands.first {
            if avif.contains(major) { return .avif }
            if heic.contains(major) { return .heic }
        }
        guard brands.contains("mif1") || brands.contains("msf1") else { return nil }
        if brands.contains(where: avif.contains) { return .avif }
        if brands.contains(where: heic.contains) { return .heic }
        return nil
    }

    private static func knownOtherFormat(_ head: [UInt8]) -> ImageCodecError.UnsupportedFormat {
        func ascii(_ range: Range<Int>) -> String? {
            guard head.count >= range.upperBound else { return nil }
            return String(decoding: head[range], as: UTF8.self)
        }
        if ascii(0..<2) == "BM" { return .bmp }
        if head.starts(with: [0x49, 0x49, 0x2A, 0x00]) || head.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return .tiff
        }
        return .unknown
    }
}
