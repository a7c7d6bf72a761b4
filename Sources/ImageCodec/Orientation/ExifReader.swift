/// Reads the orientation tag from an EXIF (TIFF-structured) block.
///
/// EXIF comes from the file, so every offset is bounds-checked; anything malformed simply means
/// "no orientation" rather than an error, because a bad tag must not cost the user the image.
enum ExifReader {
    private static let orientationTag: UInt16 = 0x0112
    private static let shortType: UInt16 = 3

    /// `bytes` starts at the TIFF header ("II*\0" or "MM\0*"). Returns nil when there is no valid tag.
    static func orientation(tiff bytes: some RandomAccessCollection<UInt8>) -> ExifOrientation? {
        let data = Array(bytes)
        guard data.count >= 8 else { return nil }
        let littleEndian: Bool
        switch (data[0], data[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ offset: Int) -> UInt16? {
            guard offset >= 0, offset + 2 <= data.count else { return nil }
            let a = UInt16(data[offset]), b = UInt16(data[offset + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }
        func u32(_ offset: Int) -> UInt32? {
            guard let high = u16(littleEndian ? offset + 2 : offset),
                let low = u16(littleEndian ? offset : offset + 2)
            else { return nil }
            return UInt32(high) << 16 | UInt32(low)
        }
        guard u16(2) == 42, let ifdOffset = u32(4), let entryCount = u16(Int(ifdOffset)) else { return nil }
        for index in 0..<Int(entryCount) {
            let entry = Int(ifdOffset) + 2 + index * 12
            guard let tag = u16(entry) else { return nil }
            guard tag == orientationTag else { continue }
            guard u16(entry + 2) == shortType, u32(entry + 4) == 1, let value = u16(entry + 8) else { return nil }
            return ExifOrientation(rawValue: Int(value))
        }
        return nil
    }

    /// `segment` is the payload of a JPEG APP1 marker: "Exif\0\0" followed by the TIFF block.
    static func orientation(app1 segment: some RandomAccessCollection<UInt8>) -> ExifOrientation? {
        let signature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]
        guard segment.starts(with: signature) else { return nil }
        return orientation(tiff: segment.dropFirst(signature.count))
    }
}
