/// A TIFF-structured EXIF block ("II*\0" or "MM\0*" first) and the entries of its first IFD,
/// read bounds-checked: EXIF comes from the file, so an offset past the end is simply an entry
/// the block does not have.
///
/// Only IFD0 is read: it holds the orientation and the copyright, the two things the engine
/// edits. Everything else (the Exif and GPS IFDs, the thumbnail) is carried as bytes untouched.
struct ExifBlock {
    struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        /// Where the 12-byte entry starts in the block.
        var position: Int
    }

    let bytes: [UInt8]
    let littleEndian: Bool
    /// IFD0's entries, up to the first that runs past the end.
    let entries: [Entry]

    static let orientationTag: UInt16 = 0x0112
    static let artistTag: UInt16 = 0x013B
    static let copyrightTag: UInt16 = 0x8298
    private static let asciiType: UInt16 = 2
    private static let shortType: UInt16 = 3

    /// Nil when `tiff` does not start with a TIFF header whose IFD0 has a readable entry count.
    init?(tiff: some Collection<UInt8>) {
        let bytes = Array(tiff)
        let littleEndian: Bool
        switch (bytes.first, bytes.dropFirst().first) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ offset: Int) -> UInt16? { Self.u16(bytes, offset, littleEndian) }
        func u32(_ offset: Int) -> UInt32? { Self.u32(bytes, offset, littleEndian) }
        guard u16(2) == 42, let ifd = u32(4).map(Int.init), let entryCount = u16(ifd) else { return nil }
        var entries: [Entry] = []
        for index in 0..<Int(entryCount) {
            let position = ifd + 2 + index * 12
            guard position + 12 <= bytes.count, let tag = u16(position), let type = u16(position + 2), let count = u32(position + 4)
            else { break }
            entries.append(Entry(tag: tag, type: type, count: count, position: position))
        }
        (self.bytes, self.littleEndian, self.entries) = (bytes, littleEndian, entries)
    }

    /// The orientation tag's value, when it is one SHORT of 1-8.
    var orientation: ExifOrientation? {
        guard let entry = entries.first(where: { $0.tag == Self.orientationTag }), entry.type == Self.shortType, entry.count == 1,
            let value = Self.u16(bytes, entry.position + 8, littleEndian)
        else { return nil }
        return ExifOrientation(rawValue: Int(value))
    }

    /// The block with its orientation set to 1 (upright) in place, every other byte as it was:
    /// what goes with pixels the orientation was applied to.
    var settingOrientationUp: [UInt8] {
        var result = bytes
        for entry in entries where entry.tag == Self.orientationTag && entry.type == Self.shortType && entry.count == 1 {
            result[entry.position + 8] = littleEndian ? 1 : 0
            result[entry.position + 9] = littleEndian ? 0 : 1
        }
        return result
    }

    /// A new block holding only IFD0's Artist and Copyright (ASCII), as imgproxy's
    /// `keep_copyright` keeps them; nil when neither has a visible character (cameras write
    /// them as runs of spaces).
    var copyrightOnly: [UInt8]? {
        let kept: [(UInt16, [UInt8])] = [Self.artistTag, Self.copyrightTag].compactMap { tag in
            guard let entry = entries.first(where: { $0.tag == tag && $0.type == Self.asciiType }), let value = value(entry) else { return nil }
            var text = Array(value.prefix { $0 != 0 })
            while text.last == 0x20 { text.removeLast() }
            return text.isEmpty ? nil : (tag, text + [0])
        }
        guard !kept.isEmpty else { return nil }
        // Little-endian: header, IFD0 (count, entries, no next IFD), then the values it points at.
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16) }
        var block: [UInt8] = [0x49, 0x49] + le16(42) + le32(8) + le16(kept.count)
        var values: [UInt8] = []
        let valuesStart = 8 + 2 + kept.count * 12 + 4
        for (tag, text) in kept {
            block += le16(Int(tag)) + le16(Int(Self.asciiType)) + le32(text.count)
            if text.count <= 4 {
                block += text + [UInt8](repeating: 0, count: 4 - text.count) // small: padding to 4 bytes
            } else {
                block += le32(valuesStart + values.count)
                values += text
                if values.count & 1 == 1 { values.append(0) } // TIFF keeps values on word boundaries
            }
        }
        return block + le32(0) + values
    }

    /// An entry's value bytes: in the entry when they fit in 4 bytes, else where it points.
    private func value(_ entry: Entry) -> ArraySlice<UInt8>? {
        let size: Int =
            switch entry.type {
            case 1, 2, 6, 7: 1
            case 3, 8: 2
            case 4, 9, 11: 4
            default: 8
            }
        let (length, overflow) = Int(entry.count).multipliedReportingOverflow(by: size)
        guard !overflow else { return nil }
        if length <= 4 { return bytes[entry.position + 8..<entry.position + 8 + length] }
        guard let offset = Self.u32(bytes, entry.position + 8, littleEndian).map(Int.init), offset <= bytes.count, length <= bytes.count - offset
        else { return nil }
        return bytes[offset..<offset + length]
    }

    private static func u16(_ bytes: [UInt8], _ offset: Int, _ littleEndian: Bool) -> UInt16? {
        guard offset >= 0, offset <= bytes.count - 2 else { return nil }
        let (a, b) = (UInt16(bytes[offset]), UInt16(bytes[offset + 1]))
        return littleEndian ? a | b << 8 : a << 8 | b
    }

    private static func u32(_ bytes: [UInt8], _ offset: Int, _ littleEndian: Bool) -> UInt32? {
        guard let first = u16(bytes, offset, littleEndian), let second = u16(bytes, offset + 2, littleEndian) else { return nil }
        return littleEndian ? UInt32(second) << 16 | UInt32(first) : UInt32(first) << 16 | UInt32(second)
    }
}
