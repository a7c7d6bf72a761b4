import Foundation

/// The perceptual encoder's quantization: one table per plane kind, shaped by a smooth function
/// of radial frequency instead of Annex K's visibility thresholds, and a dead zone per block that
/// the masking field widens where texture hides the error. The arithmetic (each coefficient
/// times its reciprocal, rounded to nearest, zeroed below deadZone + strength · maskedDeadZone)
/// runs with the DCT in CImageKernels' `iec_fdct_quantize_row`.
struct PerceptualQuantization {
    /// 64 steps, natural order, for the shim.
    let lumaTable: [UInt32]
    let chromaTable: [UInt32]
    /// 1/(step · ForwardDCT's output scale), one vector per row of the natural order (lane v of
    /// [u] is (u, v)), as ForwardDCT returns coefficients: one multiplication both undoes the
    /// transform's scaling and divides by the step.
    let lumaReciprocals: [SIMD8<Float>]
    let chromaReciprocals: [SIMD8<Float>]
    /// Dead zone of a flat block and its growth with masking strength, same layout; DC's is 0.
    /// One for every plane: a flat block's dead zone does not depend on the plane.
    let flatDeadZone: [SIMD8<Float>]
    let lumaMaskedDeadZone: [SIMD8<Float>]
    let chromaMaskedDeadZone: [SIMD8<Float>]

    /// libjpeg's quality curve (jcparam.c): the percentage a quality scales a table by, so that a
    /// quality means what users know from every other JPEG encoder: 50 is the table itself,
    /// below it 5000/q %, above it 200 − 2q %.
    static func scale(quality: Float) -> Float {
        let q = min(max(quality, 1), 100)
        return q < 50 ? 50 / q : (200 - 2 * q) / 100
    }

    init(quality: Float, chromaQuality: Float, tuning: PerceptualJPEGTuning) {
        func table(dc: Float, slope: Float, power: Float, scale: Float) -> [UInt32] {
            (0..<64).map { index in
                let radius = Float((index / 8) * (index / 8) + (index % 8) * (index % 8)).squareRoot()
                let step = dc * (1 + slope * pow(radius, power)) * scale
                return UInt32(min(max(step.rounded(), 1), 255))
            }
        }
        lumaTable = table(dc: tuning.lumaDC, slope: tuning.lumaSlope, power: tuning.lumaPower, scale: Self.scale(quality: quality))
        chromaTable = table(
            dc: tuning.chromaDC, slope: tuning.chromaSlope, power: tuning.chromaPower, scale: Self.scale(quality: chromaQuality))
        func rows(_ value: (Int) -> Float) -> [SIMD8<Float>] {
            (0..<8).map { u in SIMD8<Float>((0..<8).map { v in value(u * 8 + v) }) }
        }
        let lumaSteps = lumaTable, chromaSteps = chromaTable
        func reciprocal(_ steps: [UInt32], _ index: Int) -> Float {
            1 / (Float(steps[index]) * ForwardDCT.outputScale(u: index / 8))
        }
        lumaReciprocals = rows { reciprocal(lumaSteps, $0) }
        chromaReciprocals = rows { reciprocal(chromaSteps, $0) }
        let maximumRadius = Float(98).squareRoot()
        func radius(_ index: Int) -> Float { Float((index / 8) * (index / 8) + (index % 8) * (index % 8)).squareRoot() }
        flatDeadZone = rows { $0 == 0 ? 0 : tuning.flatDeadZone }
        lumaMaskedDeadZone = rows { index in
            index == 0
                ? 0
                : tuning.maskedDeadZoneLow + (tuning.maskedDeadZoneHigh - tuning.maskedDeadZoneLow) * radius(index) / maximumRadius
        }
        chromaMaskedDeadZone = rows { $0 == 0 ? 0 : tuning.chromaMaskedDeadZone }
    }
}
