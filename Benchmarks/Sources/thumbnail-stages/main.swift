import BenchmarkSupport
import Foundation
import ImageBudget
@_spi(Tuning) import ImageCodec

// Where a thumbnail loses quality and spends time, one stage at a time. Each variant changes
// one knob of the engine's path and is scored (SSIM on luma, the engine's own implementation,
// checked against scikit-image in its tests) against a full decode resampled with Lanczos
// alone to the same size; times are medians of 5 decodes.
//
// Usage: thumbnail-stages [--size PX] SAMPLES-DIR [FILE...]

var arguments = Array(CommandLine.arguments.dropFirst())
var size = 1080
if let flag = arguments.firstIndex(of: "--size"), flag + 1 < arguments.count, let value = Int(arguments[flag + 1]) {
    size = value
    arguments.removeSubrange(flag...(flag + 1))
}
let samples = URL(fileURLWithPath: arguments.first ?? "SampleImages")
let names: [String] = arguments.count > 1 ? Array(arguments.dropFirst())
    : try FileManager.default.contentsOfDirectory(atPath: samples.path).filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted()

struct Variant {
    var name: String
    var change: (inout DecodingTuning) -> Void
}
let variants: [Variant] = [
    Variant(name: "engine") { _ in },
    Variant(name: "DCT headroom 1.0") { $0.dctHeadroom = 1.0; $0.boxScaleHeadroom = 1.0 },
    Variant(name: "libjpeg's reduced-scale IDCTs (its averaging 2/8, 4/8: 2× left there)") { $0.libjpegReducedIDCT = true },
    Variant(name: "rule before: libjpeg's 2/8, 4/8, 1.5× elsewhere") { $0.libjpegReducedIDCT = true; $0.dctHeadroom = 1.5 },
    Variant(name: "DCT 1/2,1/4,1/8 only, 2× left (vips)") {
        $0.powerOfTwoScalesOnly = true
        $0.boxScaleHeadroom = 2.0
        $0.libjpegReducedIDCT = true
    },
    Variant(name: "no box pre-reduction") { $0.boxPreReduction = false },
    Variant(name: "simple chroma upsampling") { $0.fancyUpsampling = false },
    Variant(name: "fast IDCT") { $0.fastIDCT = true },
]

func median(_ body: () throws -> Void) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<5 {
        let start = Measure.now()
        try body()
        times.append(Double(Measure.now() - start) / 1e6)
    }
    return Measure.median(times)
}

func score(_ bitmap: Bitmap, _ reference: StructuralSimilarity.Reference) throws -> Double {
    StructuralSimilarity.score(reference, try LumaPlane(bitmap))
}

print("Thumbnails to \(size) px: SSIM (luma) against a full decode + Lanczos alone; time in ms (median of 5)\n")
print("| file | " + variants.map(\.name).joined(separator: " | ") + " | q85 4:2:0 encode | q85 4:4:4 encode |")
print("|---|" + String(repeating: "---|", count: variants.count + 2))
var deltas = [[Double]](repeating: [], count: variants.count + 2)
for name in names {
    let data = try Data(contentsOf: samples.appendingPathComponent(name))
    let full = try ImageDecoder().decode(data)
    var cells: [String] = []
    var engineBitmap: Bitmap?
    var reference: StructuralSimilarity.Reference?
    var engineScore = 0.0
    for (index, variant) in variants.enumerated() {
        var options = DecodingOptions(maxPixelSize: size)
        variant.change(&options.tuning)
        let decoder = ImageDecoder(options: options)
        var bitmap = try decoder.decode(data)
        let time = try median { bitmap = try decoder.decode(data) }
        if reference == nil {
            reference = StructuralSimilarity.Reference(
                try LumaPlane(try full.resampled(width: bitmap.width, height: bitmap.height, boxPreReduction: false)))
        }
        let value = try score(bitmap, reference!)
        if index == 0 {
            engineBitmap = bitmap
            engineScore = value
            cells.append(String(format: "%.4f, %.0f ms", value, time))
        } else {
            deltas[index].append(value - engineScore)
            cells.append(String(format: "%+.4f, %.0f ms", value - engineScore, time))
        }
    }
    for (offset, subsampling) in [JPEGEncodingOptions.ChromaSubsampling.s420, .s444].enumerated() {
        let encoded = try ImageEncoder.jpeg(engineBitmap!, options: JPEGEncodingOptions(quality: 85, chromaSubsampling: subsampling))
        let value = try score(try ImageDecoder().decode(encoded), reference!)
        deltas[variants.count + offset].append(value - engineScore)
        cells.append(String(format: "%+.4f, %d KB", value - engineScore, encoded.count / 1000))
    }
    print("| \(name) | " + cells.joined(separator: " | ") + " |")
}
print("| mean Δ | – | " + deltas.dropFirst().map { String(format: "%+.4f", $0.reduce(0, +) / Double(max(1, $0.count))) }.joined(separator: " | ") + " |")
