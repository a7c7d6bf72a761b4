import Foundation

/// The sRGB transfer curve (IEC 61966-2-1) as tables, for code that works in linear light on
/// 8-bit sRGB pixels: the smart crop's attention scores here, the budget's SSIMULACRA2 planes
/// in ImageBudget.
package enum SRGBTransfer {
    /// sRGB byte → linear light, one entry per byte value (computed in Double).
    package static let linear: [Float] = (0..<256).map { value in
        let encoded = Double(value) / 255
        return Float(encoded <= 0.04045 ? encoded / 12.92 : pow((encoded + 0.055) / 1.055, 2.4))
    }
}
