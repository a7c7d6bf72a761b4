import Foundation

extension ImageSource {
    /// The source's EXIF block, ready for an encoder (see ``ImageMetadata``): the first one
    /// in the file, with its orientation set to upright, because the pixels a decode delivers
    /// are upright (libheif turns HEIC and AVIF itself) or, with
    /// ``DecodingOptions/appliesOrientation`` off, are to be shown as they are stored.
    ///
    /// Where it is read from: a JPEG's first APP1 "Exif" segment, a PNG's `eXIf`, a WebP's
    /// `EXIF` chunk, the `Exif` item that describes a HEIF's primary image. A block larger
    /// than ``DecodingLimits/maxEXIFBytes`` or ``ImageMetadata/maximumEXIFBytes``, or one that is
    /// not TIFF-structured, is left out whole: a cut block would be a corrupt one. The bytes
    /// are read again from ``data`` (nothing is kept from the header read), so a caller that
    /// never asks pays nothing.
    public func metadata() -> ImageMetadata {
        let limit = min(limits.maxEXIFBytes, ImageMetadata.maximumEXIFBytes)
        let found: [UInt8]? = data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [UInt8]? in
            let exif: Range<Int>? =
                switch layout {
                case .jpeg: Self.jpegEXIF(bytes)
                case .png: (try? PNGChunkScan(bytes, limits: limits))?.exif
                case .webp(let webp): webp.container.exif.map { Self.droppingSignature(bytes, $0) }
                case .heif(let heif): heif.exif.flatMap { Self.heifEXIF(bytes, $0) }
                // GIF has no EXIF.
                case .gif: nil
                }
            guard let exif, exif.count <= limit else { return nil }
            return Array(bytes[exif])
        }
        guard let found, ExifBlock(tiff: found) != nil else { return .none }
        return ImageMetadata(exif: found).uprighted
    }

    /// The TIFF block of the first APP1 "Exif" segment before the first scan, walked by the
    /// segments' length fields (what libjpeg reads next would report a broken one).
    private static func jpegEXIF(_ bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            // Fill bytes, and the markers that have no length.
            if marker == 0xFF || marker == 0x01 || (0xD0...0xD7).contains(marker) {
                offset += marker == 0xFF ? 1 : 2
                continue
            }
            guard marker != 0xDA, marker != 0xD9 else { return nil }
            // The length counts its own two bytes: less is a broken segment.
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let end = offset + 2 + length
            guard length >= 2, end <= bytes.count else { return nil }
            let payload = offset + 4..<end
            if marker == 0xE1, bytes[payload].starts(with: ExifReader.signature) {
                return payload.lowerBound + ExifReader.signature.count..<payload.upperBound
            }
            offset = end
        }
        return nil
    }

    /// A WebP EXIF chunk holds the TIFF block; some writers keep JPEG's "Exif\0\0" in front.
    private static func droppingSignature(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Range<Int> {
        bytes[range].starts(with: ExifReader.signature) ? range.lowerBound + ExifReader.signature.count..<range.upperBound : range
    }

    /// An `Exif` item: a 4-byte big-endian offset from its end to the TIFF header, then the
    /// block (usually "Exif\0\0" and the header, offset 6).
    private static func heifEXIF(_ bytes: UnsafeRawBufferPointer, _ item: Range<Int>) -> Range<Int>? {
        guard item.count >= 4 else { return nil }
        let skip = (0..<4).reduce(0) { $0 << 8 | Int(bytes[item.lowerBound + $1]) }
        guard skip <= item.count - 4 else { return nil }
        return item.lowerBound + 4 + skip..<item.upperBound
    }
}
