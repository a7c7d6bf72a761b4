/// The chunks of a PNG before its first IDAT, walked by their length fields alone: how many
/// there are, and where the first eXIf is. libpng skips eXIf (and every other ancillary chunk
/// the engine does not use) unread; the engine reads the orientation from the chunk in place,
/// so EXIF costs no allocation whatever its size.
///
/// A data stream that ends early or a chunk that is malformed ends the walk quietly: libpng
/// reads the same bytes next and reports the error in its own words.
struct PNGChunkScan {
    /// The first eXIf's payload, as offsets into the data, when its CRC is right.
    var exif: Range<Int>?
    /// Chunks before the first IDAT, IHDR included.
    var chunksBeforeImageData = 0

    private static let signatureLength = 8

    /// Walks `bytes`, refusing more than `limits.maxChunksBeforeImageData` chunks before IDAT
    /// (`limitExceeded`): each costs libpng a CRC pass and a dispatch, so a file of empty chunks
    /// would otherwise buy CPU per byte far above what its pixels cost.
    init(_ bytes: UnsafeRawBufferPointer, limits: DecodingLimits) throws(ImageCodecError) {
        var offset = Self.signatureLength
        while offset <= bytes.count - 12 {
            let length = Int(Self.bigEndian32(bytes, at: offset))
            let type = Self.bigEndian32(bytes, at: offset + 4)
            guard length <= Int(Int32.max), type != Self.idat else { return }
            chunksBeforeImageData += 1
            if chunksBeforeImageData > limits.maxChunksBeforeImageData {
                throw .limitExceeded("PNG has more than \(limits.maxChunksBeforeImageData) chunks before its image data")
            }
            let payload = offset + 8
            guard length <= bytes.count - payload - 4 else { return }
            if type == Self.exifType, exif == nil,
                CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(payload + length)]))
                    == Self.bigEndian32(bytes, at: payload + length)
            {
                exif = payload..<(payload + length)
            }
            offset = payload + length + 4
        }
    }

    private static let idat: UInt32 = 0x4944_4154
    private static let exifType: UInt32 = 0x6558_4966

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(bytes[offset + $1]) }
    }
}

/// CRC-32 as PNG (and zlib) compute it: polynomial 0xEDB88320, reflected, inverted.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
