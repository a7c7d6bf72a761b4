/// Reads the orientation tag from an EXIF block, bare or behind JPEG's "Exif\0\0".
///
/// Anything malformed simply means "no orientation" rather than an error, because a bad tag
/// must not cost the user the image.
enum ExifReader {
    /// `bytes` starts at the TIFF header ("II*\0" or "MM\0*"). Returns nil when there is no valid tag.
    static func orientation(tiff bytes: some RandomAccessCollection<UInt8>) -> ExifOrientation? {
        ExifBlock(tiff: bytes)?.orientation
    }

    /// `segment` is the payload of a JPEG APP1 marker: "Exif\0\0" followed by the TIFF block.
    static func orientation(app1 segment: some RandomAccessCollection<UInt8>) -> ExifOrientation? {
        guard let tiff = tiff(app1: segment) else { return nil }
        return orientation(tiff: tiff)
    }

    /// The TIFF block of an APP1 payload ("Exif\0\0" and the block); nil for another APP1.
    static func tiff<C: RandomAccessCollection<UInt8>>(app1 segment: C) -> C.SubSequence? {
        guard segment.starts(with: signature) else { return nil }
        return segment.dropFirst(signature.count)
    }

    /// What precedes the TIFF block in a JPEG APP1 segment (and, from some writers, in a WebP
    /// EXIF chunk).
    static let signature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]
}
