import Foundation

/// The marker segments of a JPEG's header, read from its bytes: what tests check an encoder
/// wrote, rather than what it was asked for.
public enum JPEGSegments {
    /// The segments of `data` up to the first scan: each marker (APPn, DQT, SOFn, ...) and its
    /// payload (after the length field).
    public static func segments(_ data: Data) -> [(marker: UInt8, payload: ArraySlice<UInt8>)] {
        let bytes = [UInt8](data)
        var segments: [(marker: UInt8, payload: ArraySlice<UInt8>)] = []
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let end = min(bytes.count, offset + 2 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])))
            segments.append((marker, bytes[min(offset + 4, end)..<end]))
            if marker == 0xDA { break }
            offset = end
        }
        return segments
    }

    /// JPEG markers present in `data`, in order, up to the first scan.
    public static func markers(_ data: Data) -> [UInt8] {
        segments(data).map(\.marker)
    }

    /// Quantization tables (id → 64 steps in natural order) from the DQT segments of `data`.
    public static func quantizationTables(_ data: Data) -> [Int: [Int]] {
        // Zig-zag position → natural index: walk the anti-diagonals, alternating direction.
        let zigzag = (0..<15).flatMap { sum in
            let cells = (0...sum).map { (row: $0, column: sum - $0) }.filter { $0.row < 8 && $0.column < 8 }
            return (sum % 2 == 0 ? cells.reversed() : cells).map { $0.row * 8 + $0.column }
        }
        var tables: [Int: [Int]] = [:]
        for segment in segments(data) where segment.marker == 0xDB {
            // 8-bit tables: one byte of precision and id, then 64 steps in zig-zag order.
            var table = segment.payload.startIndex
            while table + 65 <= segment.payload.endIndex {
                var natural = [Int](repeating: 0, count: 64)
                for position in 0..<64 { natural[zigzag[position]] = Int(segment.payload[table + 1 + position]) }
                tables[Int(segment.payload[table] & 0x0F)] = natural
                table += 65
            }
        }
        return tables
    }
}
