import CImageKernels
import Foundation
import ImageCodec

/// Three planes of one image — linear-light RGB, or SSIMULACRA2's positive XYB — row-major,
/// `width × height` floats each. Planes rather than interleaved pixels: every pass of the
/// metric works on one channel at a time, and contiguous channels let those loops vectorise.
struct ColorPlanes: Sendable {
    let width: Int
    let height: Int
    /// Three planes: R, G, B or X, Y, B.
    var planes: [[Float]]

    /// Planes of this size: `planes` when given, else three the caller must write in full
    /// before reading (they are not zero-filled).
    init(width: Int, height: Int, planes: [[Float]]? = nil) {
        self.width = width
        self.height = height
        self.planes = planes ?? (0..<3).map { _ in Self.uninitialized(width * height) }
    }

    /// The linear-light RGB of an sRGB bitmap: gray replicated into the three planes, alpha
    /// composited over white first, as uploads are (and as `LumaPlane` does).
    init(linearRGBOf bitmap: Bitmap) throws(ImageCodecError) {
        let opaque = try bitmap.flattened(over: .white)
        self.init(width: opaque.width, height: opaque.height)
        let count = width * height
        let channels = opaque.format.channels
        SRGBTransfer.linear.withUnsafeBufferPointer { table in
            opaque.pixels.withUnsafeBufferPointer { pixels in
                for plane in 0..<3 {
                    let offset = channels == 1 ? 0 : plane
                    planes[plane].withUnsafeMutableBufferPointer { out in
                        for index in 0..<count { out[index] = table[Int(pixels[index * channels + offset])] }
                    }
                }
            }
        }
    }

    /// A plane whose every value the caller writes before reading: no zero-filling pass over
    /// megabytes that are overwritten at once.
    static func uninitialized(_ count: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// Half the size each way (rounded up), each pixel the mean of its 2×2 block — of the one
    /// or two pixels that exist where an odd width or height leaves a partial block.
    func halved() -> ColorPlanes {
        let (width, height, outWidth, outHeight) = (width, height, (width + 1) / 2, (height + 1) / 2)
        var halves: [[Float]] = []
        for plane in 0..<3 {
            var half = Self.uninitialized(outWidth * outHeight)
            planes[plane].withUnsafeBufferPointer { source in
                half.withUnsafeMutableBufferPointer { target in
                    for y in 0..<outHeight {
                        let top = source.baseAddress! + 2 * y * width
                        // A missing second row counts the first one twice: the mean of one row.
                        let bottom = 2 * y + 1 < height ? top + width : top
                        let row = target.baseAddress! + y * outWidth
                        for x in 0..<(width / 2) {
                            row[x] = 0.25 * ((top[2 * x] + top[2 * x + 1]) + (bottom[2 * x] + bottom[2 * x + 1]))
                        }
                        if width % 2 == 1 { row[outWidth - 1] = 0.5 * (top[width - 1] + bottom[width - 1]) }
                    }
                }
            }
            halves.append(half)
        }
        return ColorPlanes(width: outWidth, height: outHeight, planes: halves)
    }

    /// Turns these linear planes into SSIMULACRA2's XYB, shifted positive as the metric
    /// expects: the opsin absorbance mix plus bias, cube root minus the bias's cube root, X and
    /// Y from the first two, then X · 14 + 0.42, Y + 0.01 and B − Y + 0.55 (`iec_positive_xyb`,
    /// on the CPU's widest version; every version gives the same floats). In place: each pixel
    /// is read before it is written, and a score's planes are megabytes it would otherwise
    /// allocate (and fault in) again at every scale.
    mutating func convertToPositiveXYB() {
        let count = width * height
        // Out of `planes`, so each is uniquely referenced and written in place.
        var (red, green, blue) = (planes[0], planes[1], planes[2])
        planes = []
        Self.opsinMatrix.withUnsafeBufferPointer { matrix in
            red.withUnsafeMutableBufferPointer { r in
                green.withUnsafeMutableBufferPointer { g in
                    blue.withUnsafeMutableBufferPointer { b in
                        iec_positive_xyb(
                            r.baseAddress!, g.baseAddress!, b.baseAddress!, count, matrix.baseAddress!, Self.opsinBias, Self.opsinBiasRoot)
                    }
                }
            }
        }
        planes = [red, green, blue]
    }

    /// The opsin absorbance matrix (row-major) and bias of JPEG XL's XYB, which SSIMULACRA2
    /// measures in.
    static let opsinMatrix: [Float] = [
        0.30, 0.622, 0.078,
        0.23, 0.692, 0.078,
        0.24342268924547819, 0.20476744424496821, 1 - 0.24342268924547819 - 0.20476744424496821
    ]
    static let opsinBias: Float = 0.0037930732552754493

    /// The cube root of `opsinBias`, which XYB subtracts so that black is zero.
    static let opsinBiasRoot = Float(cbrt(Double(opsinBias)))
}
