import Foundation

/// What an encoder may write besides the pixels: an EXIF block.
///
/// By default the encoders write none (these are often uploads: no GPS, no camera serials). A
/// caller that wants the source's EXIF in the output (a photo site's "keep metadata", imgproxy's
/// `strip_metadata:0`) reads it with ``ImageSource/metadata()`` and passes it to the encoder;
/// one that only wants the photographer credited keeps ``copyright``.
///
/// ```swift
/// let source = try ImageSource(data: data)
/// let bitmap = try source.decode(DecodingOptions(maxPixelSize: 1024)).bitmap
/// let jpeg = try ImageEncoder.jpeg(bitmap, metadata: source.metadata().copyright)
/// ```
///
/// JPEG carries it as an APP1 segment, PNG as an `eXIf` chunk, WebP as an `EXIF` chunk (in an
/// extended container), AVIF as an `Exif` item.
public struct ImageMetadata: Sendable, Hashable {
    /// A TIFF-structured EXIF block ("II*\0" or "MM\0*" first), as a JPEG's APP1 segment holds
    /// it after "Exif\0\0". nil: none.
    public var exif: [UInt8]?

    /// Metadata holding `exif` (nil: none).
    public init(exif: [UInt8]? = nil) {
        self.exif = exif
    }

    /// No metadata: what the encoders write by default.
    public static let none = ImageMetadata()

    /// Whether there is nothing to write.
    public var isEmpty: Bool { exif == nil }

    /// The largest EXIF block an encoder writes: what one JPEG APP1 segment can hold after its
    /// "Exif\0\0" (65,533 bytes of payload), so that every format carries the same block.
    public static let maximumEXIFBytes = 65_533 - ExifReader.signature.count

    /// Only who made the image and who owns it: a new EXIF block with the source's Artist and
    /// Copyright tags, as imgproxy's `keep_copyright` keeps them. Empty when the source names
    /// neither (tags that are only spaces, as cameras leave them, name no one).
    public var copyright: ImageMetadata {
        ImageMetadata(exif: exif.flatMap { ExifBlock(tiff: $0)?.copyrightOnly })
    }

    /// The same metadata for pixels the EXIF orientation was applied to: the orientation tag
    /// says upright (1), so that no viewer turns the image a second time. Every other byte is
    /// kept.
    var uprighted: ImageMetadata {
        ImageMetadata(exif: exif.flatMap { ExifBlock(tiff: $0)?.settingOrientationUp } ?? exif)
    }

    /// Throws `invalidArgument` for an EXIF block an encoder would not write: one that is not
    /// TIFF-structured, or longer than ``maximumEXIFBytes``.
    func validate() throws(ImageCodecError) {
        guard let exif else { return }
        guard exif.count <= Self.maximumEXIFBytes else {
            throw .invalidArgument("an EXIF block may be at most \(Self.maximumEXIFBytes) bytes, got \(exif.count)")
        }
        guard ExifBlock(tiff: exif) != nil else { throw .invalidArgument("the EXIF block does not start with a TIFF header and IFD") }
    }
}

extension ImageMetadata {
    /// The bytes ``written(intoJPEG:)`` adds: the APP1 segment's marker, length, "Exif\0\0"
    /// and the block (0 without one). What a byte cap leaves for the image.
    public var jpegSegmentBytes: Int { exif.map { 4 + ExifReader.signature.count + $0.count } ?? 0 }

    /// `jpeg` (a JPEG file) with this metadata's APP1 segment after SOI and any JFIF APP0, where
    /// EXIF readers look for it: for a JPEG made by another writer, such as the upload budget's
    /// search, whose bytes are then counted with the metadata. `metadata` is checked as the
    /// encoders check it; a file that does not start with SOI is an `invalidArgument`.
    public func written(intoJPEG jpeg: Data) throws(ImageCodecError) -> Data {
        try validate()
        guard let exif else { return jpeg }
        let bytes = [UInt8](jpeg)
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw .invalidArgument("not a JPEG: no SOI marker") }
        var position = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count >= 6 {
            position = min(bytes.count, 4 + (Int(bytes[4]) << 8 | Int(bytes[5])))
        }
        let length = 2 + ExifReader.signature.count + exif.count
        let segment = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + ExifReader.signature + exif
        return Data(bytes[..<position] + segment + bytes[position...])
    }

    /// `png` (a PNG file) with this metadata's `eXIf` chunk right after IHDR (it must come
    /// before the image data).
    func written(intoPNG png: Data) throws(ImageCodecError) -> Data {
        try validate()
        guard let exif else { return png }
        // Signature (8) and IHDR (length, type, 13 bytes, CRC).
        let afterHeader = 8 + 8 + 13 + 4
        let bytes = [UInt8](png)
        guard bytes.count > afterHeader, bytes[12..<16].elementsEqual("IHDR".utf8) else { throw .invalidArgument("not a PNG: no IHDR first") }
        func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        let typeAndData = Array("eXIf".utf8) + exif
        let crc = typeAndData.withUnsafeBytes { CRC32.checksum($0) }
        let chunk = be32(UInt32(exif.count)) + typeAndData + be32(crc)
        return Data(bytes[..<afterHeader] + chunk + bytes[afterHeader...])
    }
}

/// Which of a source's EXIF an output keeps: the choice a thumbnail batch
/// (``ThumbnailOptions/keptMetadata``), the CLI's `--metadata` and `serve`'s `sm:`/`kcr:` make.
public enum KeptMetadata: String, Sendable, Hashable, CaseIterable {
    /// No EXIF at all.
    case none
    /// The Artist and Copyright tags only (``ImageMetadata/copyright``).
    case copyright
    /// The whole block, its orientation set upright.
    case all

    /// What the encoder is given for an output of `source`.
    public func metadata(of source: ImageSource) -> ImageMetadata {
        switch self {
        case .none: .none
        case .copyright: source.metadata().copyright
        case .all: source.metadata()
        }
    }
}
