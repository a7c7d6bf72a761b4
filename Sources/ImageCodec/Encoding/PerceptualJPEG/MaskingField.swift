import CImageKernels
import Foundation

/// How strongly each 8×8 luma block's own texture hides quantization error, 0 (flat: every small
/// coefficient is kept, or smooth gradients band) to 1 (busy: small coefficients may go).
///
/// A block's activity is the mean |Laplacian| of its luma; a block beside a flatter one borrows
/// part of the flatter one's strength (a 3×3 minimum), because the ringing a coarse busy block
/// makes at an edge shows in the flat side. One pass over the bitmap, a float per block.
struct MaskingField {
    let blocksWide: Int
    let blocksHigh: Int
    private let strengths: ChargedArray<Float>

    init(_ bitmap: Bitmap, tuning: PerceptualJPEGTuning) throws(ImageCodecError) {
        let width = bitmap.width, height = bitmap.height
        let blocksWide = (width + 7) / 8, blocksHigh = (height + 7) / 8
        self.blocksWide = blocksWide
        self.blocksHigh = blocksHigh
        var sums = try ChargedArray<Float>(repeating: 0, count: blocksWide * blocksHigh)
        let channels = bitmap.format.channels
        // Three rows of luma (×256, integer) around the row being measured, rotated in place.
        var rows = try ChargedArray<Int32>(repeating: 0, count: 3 * width)
        try rows.elements.withUnsafeMutableBufferPointer { (rows) throws(ImageCodecError) in
            let storage = rows.baseAddress!
            var (above, centre, below) = (storage, storage + width, storage + 2 * width)
            try bitmap.pixels.withUnsafeBufferPointer { (pixels) throws(ImageCodecError) in
                let base = pixels.baseAddress!
                func load(_ y: Int, into row: UnsafeMutablePointer<Int32>) {
                    let source = base + y * width * channels
                    if channels >= 3 {
                        iec_rgb_to_luma256(source, width, row)
                    } else {
                        for x in 0..<width { row[x] = 256 * Int32(source[x]) }
                    }
                }
                load(0, into: centre)
                above.update(from: centre, count: width)
                if height > 1 { load(1, into: below) } else { below.update(from: centre, count: width) }
                var checkpoint = CancellationCheckpoint()
                try sums.elements.withUnsafeMutableBufferPointer { (sums) throws(ImageCodecError) in
                    for y in 0..<height {
                        try checkpoint.advance(by: width)
                        // Each block's |Laplacian| over this row, in CImageKernels (integers:
                        // the same sums on every path).
                        iec_masking_row(above, centre, below, width, sums.baseAddress! + (y / 8) * blocksWide)
                        (above, centre, below) = (centre, below, above)
                        if y + 2 < height { load(y + 2, into: below) } else { below.update(from: centre, count: width) }
                    }
                }
            }
        }
        let range = max(tuning.activityHigh - tuning.activityLow, 1e-3)
        let own = try ChargedArray<Float>(uninitializedCount: sums.count) { own in
            sums.elements.withUnsafeBufferPointer { sums in
                for by in 0..<blocksHigh {
                    let rowsInBlock = Float(min(8, height - by * 8))
                    for bx in 0..<blocksWide {
                        let pixelsInBlock = rowsInBlock * Float(min(8, width - bx * 8))
                        let activity = sums[by * blocksWide + bx] / (256 * pixelsInBlock)
                        own[by * blocksWide + bx] = min(max((log2(1 + activity) - tuning.activityLow) / range, 0), 1)
                    }
                }
            }
        }
        // The 3×3 minimum as a minimum across, then one down: the same value (a minimum does not
        // depend on its grouping) for six comparisons instead of nine.
        let across = try ChargedArray<Float>(uninitializedCount: own.count) { across in
            own.elements.withUnsafeBufferPointer { own in
                for by in 0..<blocksHigh {
                    let row = by * blocksWide
                    for bx in 0..<blocksWide {
                        var least = own[row + bx]
                        if bx > 0 { least = min(least, own[row + bx - 1]) }
                        if bx + 1 < blocksWide { least = min(least, own[row + bx + 1]) }
                        across[row + bx] = least
                    }
                }
            }
        }
        strengths = try ChargedArray<Float>(uninitializedCount: own.count) { eroded in
            own.elements.withUnsafeBufferPointer { own in
                across.elements.withUnsafeBufferPointer { across in
                    for by in 0..<blocksHigh {
                        let (above, below) = (max(by - 1, 0) * blocksWide, min(by + 1, blocksHigh - 1) * blocksWide)
                        let row = by * blocksWide
                        for bx in 0..<blocksWide {
                            let least = min(min(across[above + bx], across[row + bx]), across[below + bx])
                            eroded[row + bx] = (1 - tuning.erosion) * own[row + bx] + tuning.erosion * least
                        }
                    }
                }
            }
        }
    }

    /// The strength of luma block (x, y); blocks past the image's edge take the nearest one's.
    @inline(__always)
    func strength(x: Int, y: Int) -> Float {
        strengths[min(y, blocksHigh - 1) * blocksWide + min(x, blocksWide - 1)]
    }
}
