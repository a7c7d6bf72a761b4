import Foundation

/// What a JPEG's frame header (SOF0/SOF2) declares about chroma, read from the bytes
/// themselves rather than from what the encoder was asked for.
public enum JPEGSampling {
    /// "4:2:0", "4:2:2" or "4:4:4" from the luma component's sampling factors (the chroma
    /// components are 1×1 in the files this engine writes); nil for a one-component (gray)
    /// JPEG or bytes without a frame header.
    public static func chroma(of data: Data) -> String? {
        let bytes = [UInt8](data)
        guard let offset = frameHeaderOffset(bytes), offset + 11 < bytes.count, bytes[offset + 9] == 3 else { return nil }
        let factors = bytes[offset + 11]
        switch (factors >> 4, factors & 0x0F) {
        case (2, 2): return "4:2:0"
        case (2, 1): return "4:2:2"
        case (1, 1): return "4:4:4"
        default: return "other \(factors >> 4)x\(factors & 0x0F)"
        }
    }

    /// Where the frame header (the SOF0 or SOF2 marker) starts, walking the segments before
    /// it; nil when there is none. Its height is at +5, width at +7, component count at +9.
    public static func frameHeaderOffset(_ bytes: [UInt8]) -> Int? {
        var offset = 2
        while offset + 9 < bytes.count, bytes[offset] == 0xFF {
            if bytes[offset + 1] == 0xC0 || bytes[offset + 1] == 0xC2 { return offset }
            offset += 2 + (Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
        }
        return nil
    }
}
