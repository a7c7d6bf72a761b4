import Foundation

/// Which luma quantization table a JPEG is encoded with. Chroma always uses libjpeg's
/// standard table, so colour quality at a given `quality` does not change.
public enum JPEGQuantization: String, Sendable, Hashable, CaseIterable {
    /// The example table of the JPEG standard (ITU-T T.81 Annex K), libjpeg's default. Tuned
    /// for visibility thresholds at a set viewing distance: coarse at high frequencies.
    case annexK
    /// A smooth, flatter table, 13.5·(1 + 0.2·r)^1.2 at quality 50, r = √(u² + v²): finer
    /// at high frequencies and coarser at the lowest ones than Annex K. At equal structural
    /// similarity (SSIM at display size) it needs 4-10% fewer bytes on photos (fitted on
    /// wallpapers, checked on the camera photos in SampleImages; see the README). The 13.5
    /// makes a quality give about the same luma bytes as Annex K, so switching tables does
    /// not move bytes between luma and chroma.
    case ssimTuned

    /// 64 steps in natural order for the shim, or nil for libjpeg's own.
    var lumaTable: [UInt32]? {
        switch self {
        case .annexK: nil
        case .ssimTuned: Self.ssimTunedTable
        }
    }

    private static let ssimTunedTable: [UInt32] = (0..<64).map { index in
        let (row, column) = (Double(index / 8), Double(index % 8))
        let radius = (row * row + column * column).squareRoot()
        return UInt32((13.5 * pow(1 + 0.2 * radius, 1.2)).rounded())
    }
}
