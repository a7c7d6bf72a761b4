import Foundation

/// The Lanczos-3 windowed sinc: sharp, with little aliasing or ringing; the usual choice of
/// quality image scalers (libvips, Pillow, ImageMagick's default for downsampling).
enum LanczosKernel {
    static let radius = 3.0

    static func value(at x: Double) -> Double {
        let distance = abs(x)
        if distance < 1e-9 { return 1 }
        if distance >= radius { return 0 }
        let phase = Double.pi * x
        return radius * sin(phase) * sin(phase / radius) / (phase * phase)
    }
}
