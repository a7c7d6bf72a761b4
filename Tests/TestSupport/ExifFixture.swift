import Foundation

/// EXIF blocks written out by hand for tests, and a reader of IFD0 that shares no code with
/// the engine's: what a test checks an encoder kept or dropped.
public enum ExifFixture {
    public static let orientationTag: UInt16 = 0x0112
    public static let artistTag: UInt16 = 0x013B
    public static let copyrightTag: UInt16 = 0x8298
    public static let gpsTag: UInt16 = 0x8825
    public static let makeTag: UInt16 = 0x010F

    /// A TIFF block: IFD0 with Make, Orientation, Artist and Copyright (when given) and a GPS
    /// IFD holding a latitude reference "N", in that byte order.
    public static func block(
        orientation: Int = 1, artist: String? = "Ann Example", copyright: String? = "(c) Example Photo Ltd", bigEndian: Bool = false
    ) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        var entries: [(tag: Int, type: Int, count: Int, value: [UInt8])] = [
            (Int(makeTag), 2, 4, Array("Cam".utf8) + [0]),
            (Int(orientationTag), 3, 1, u16(orientation) + [0, 0])
        ]
        if let artist { entries.append((Int(artistTag), 2, artist.utf8.count + 1, Array(artist.utf8) + [0])) }
        if let copyright { entries.append((Int(copyrightTag), 2, copyright.utf8.count + 1, Array(copyright.utf8) + [0])) }
        entries.append((Int(gpsTag), 4, 1, [])) // the GPS IFD's offset, filled below
        let ifdEnd = 8 + 2 + entries.count * 12 + 4
        var values: [UInt8] = []
        var ifd = u16(entries.count)
        for entry in entries {
            ifd += u16(entry.tag) + u16(entry.type) + u32(entry.count)
            if entry.tag == Int(gpsTag) {
                ifd += u32(0)
            } else if entry.value.count <= 4 {
                ifd += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
            } else {
                ifd += u32(ifdEnd + values.count)
                values += entry.value + (entry.value.count % 2 == 1 ? [0] : [])
            }
        }
        ifd += u32(0)
        // The GPS IFD: one entry, GPSLatitudeRef = "N".
        let gpsOffset = ifdEnd + values.count
        let gpsField = 2 + (entries.count - 1) * 12 + 8
        ifd.replaceSubrange(gpsField..<gpsField + 4, with: u32(gpsOffset))
        let gps = u16(1) + u16(1) + u16(2) + u32(2) + [0x4E, 0, 0, 0] + u32(0)
        return (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(8) + ifd + values + gps
    }

    /// `jpeg` with `block` in an APP1 segment right after SOI.
    public static func inserting(_ block: [UInt8], into jpeg: Data) -> Data {
        let payload = Array("Exif".utf8) + [0, 0] + block
        let length = payload.count + 2
        var bytes = [UInt8](jpeg)
        bytes.insert(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload, at: 2)
        return Data(bytes)
    }

    /// IFD0's tags and their values (in the entry, or where it points), read independently of
    /// the engine; nil for a block that is not TIFF.
    public static func tags(_ block: [UInt8]) -> [UInt16: [UInt8]]? {
        guard block.count >= 8, block[0] == block[1], block[0] == 0x49 || block[0] == 0x4D else { return nil }
        let little = block[0] == 0x49
        func u16(_ at: Int) -> Int { little ? Int(block[at]) | Int(block[at + 1]) << 8 : Int(block[at]) << 8 | Int(block[at + 1]) }
        func u32(_ at: Int) -> Int { little ? u16(at) | u16(at + 2) << 16 : u16(at) << 16 | u16(at + 2) }
        let ifd = u32(4)
        var result: [UInt16: [UInt8]] = [:]
        for index in 0..<u16(ifd) {
            let entry = ifd + 2 + index * 12
            let (type, count) = (u16(entry + 2), u32(entry + 4))
            let size = count * ([1: 1, 2: 1, 3: 2, 4: 4][type] ?? 8)
            let start = size <= 4 ? entry + 8 : u32(entry + 8)
            result[UInt16(u16(entry))] = Array(block[start..<start + size])
        }
        return result
    }

    /// The block's orientation (its SHORT value), read independently of the engine.
    public static func orientation(_ block: [UInt8]) -> Int? {
        guard let value = tags(block)?[orientationTag] else { return nil }
        return block[0] == 0x49 ? Int(value[0]) | Int(value[1]) << 8 : Int(value[0]) << 8 | Int(value[1])
    }

    /// An ASCII tag's text, without its terminating NUL.
    public static func text(_ block: [UInt8], _ tag: UInt16) -> String? {
        tags(block)?[tag].map { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
