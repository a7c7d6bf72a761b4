import Foundation

/// What a JPEG's frame header (SOF0/SOF2) declares about chroma, read from the bytes
/// themselves rather than from what the encoder was asked for.
public enum JPEGSampling {
    /// "4:2:0", "4:2:2" or "4:4:4" from the luma component's sampling factors (the chroma
    /// components are 1×1 in the files this engine writes); nil for a one-component (gray)
    /// JPEG or bytes without a frame header.
    public static func chroma(of data: Data) -> String? {
        let bytes = [UInt8](data)
        var offset = 2
        while offset + 11 < bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if marker == 0xC0 || marker == 0xC2 {
                guard bytes[offset + 9] == 3 else { return nil }
                let factors = bytes[offset + 11]
                switch (factors >> 4, factors & 0x0F) {
                case (2, 2): return "4:2:0"
                case (2, 1): return "4:2:2"
                case (1, 1): return "4:4:4"
                default: return "other \(factors >> 4)x\(factors & 0x0F)"
                }
            }
            offset += 2 + length
        }
        return nil
    }
}
