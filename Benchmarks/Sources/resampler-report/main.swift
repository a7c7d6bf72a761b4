import BenchmarkSupport
import Foundation
@_spi(Tuning) import ImageCodec

// What the Lanczos-3 resampler costs, pass by pass, on the sizes `serve` and `thumbnail` give
// it: a DCT-scaled decode (1000-1400 px) reduced about 2× to a 512 px thumbnail, and a 4×
// reduction that takes the box pre-reduction first. A reduction on one axis only runs that
// axis's pass and an identity on the other (one tap of weight 1), so those rows time each pass
// alone. Times are the median (and range) of 15 rounds per photo, per megapixel of source.
//
// Usage: resampler-report [--rounds N] PHOTOS...   (directories stand for their .jpg and .png)

var arguments = Array(CommandLine.arguments.dropFirst())
var rounds = 15
if let flag = arguments.firstIndex(of: "--rounds"), flag + 1 < arguments.count, let value = Int(arguments[flag + 1]) {
    rounds = value
    arguments.removeSubrange(flag...(flag + 1))
}
let files = Photos.files(arguments.isEmpty ? ["SampleImages"] : arguments)

struct Case {
    var name: String
    /// Source longest side (the photo is first resampled to it, so every photo gives the same work).
    var side: Int
    /// Target size as a fraction of the source, per axis.
    var x: Double
    var y: Double
    var format: PixelFormat
}
let cases: [Case] = [
    Case(name: "both passes, 2× (1200 → 600), RGB", side: 1200, x: 0.5, y: 0.5, format: .rgb),
    Case(name: "horizontal pass alone, 2×, RGB", side: 1200, x: 0.5, y: 1, format: .rgb),
    Case(name: "vertical pass alone, 2×, RGB", side: 1200, x: 1, y: 0.5, format: .rgb),
    Case(name: "both passes, 2.6× (1331 → 512), RGB", side: 1331, x: 512.0 / 1331, y: 512.0 / 1331, format: .rgb),
    Case(name: "both passes, 4× with box (2048 → 512), RGB", side: 2048, x: 0.25, y: 0.25, format: .rgb),
    Case(name: "both passes, 2×, RGBA", side: 1200, x: 0.5, y: 0.5, format: .rgba),
    Case(name: "both passes, 2×, gray", side: 1200, x: 0.5, y: 0.5, format: .gray),
]

func converted(_ bitmap: Bitmap, to format: PixelFormat) -> Bitmap {
    guard bitmap.format != format else { return bitmap }
    var pixels = [UInt8](repeating: 255, count: bitmap.width * bitmap.height * format.channels)
    let channels = bitmap.format.channels
    for index in 0..<(bitmap.width * bitmap.height) {
        let source = index * channels
        switch format {
        case .gray:
            pixels[index] = bitmap.pixels[source + 1]
        case .rgba:
            for lane in 0..<3 { pixels[index * 4 + lane] = bitmap.pixels[source + lane] }
            pixels[index * 4 + 3] = UInt8(truncatingIfNeeded: 128 + index % 128)
        default:
            fatalError("unused format")
        }
    }
    return try! Bitmap(width: bitmap.width, height: bitmap.height, format: format, pixels: pixels)
}

var rows: [[Double]] = Array(repeating: [], count: cases.count)
for file in files {
    let full = try ImageDecoder().decode(Data(contentsOf: file))
    // Every photo gives every case the same work: RGB photos only (gray and RGBA are derived).
    guard full.format == .rgb else { continue }
    for (index, item) in cases.enumerated() {
        let scale = Double(item.side) / Double(max(full.width, full.height))
        var source = try full.resampled(width: max(1, Int((Double(full.width) * scale).rounded())),
                                        height: max(1, Int((Double(full.height) * scale).rounded())))
        source = converted(source, to: item.format)
        let (width, height) = (max(1, Int(Double(source.width) * item.x)), max(1, Int(Double(source.height) * item.y)))
        let megapixels = Double(source.width * source.height) / 1e6
        var times: [Double] = []
        for _ in 0..<rounds {
            let start = Measure.now()
            _ = try source.resampled(width: width, height: height)
            times.append(Double(Measure.now() - start) / 1e6 / megapixels)
        }
        rows[index].append(Measure.median(times))
    }
}

print("Resampler, ms per source megapixel: median over \(rows[0].count) RGB photos of each photo's median of \(rounds) (range of the photos' medians)\n")
print("| case | ms / MP | range |")
print("|---|---|---|")
for (index, item) in cases.enumerated() {
    let (low, high) = Measure.range(rows[index])
    print("| \(item.name) | \(String(format: "%.2f", Measure.median(rows[index]))) | \(String(format: "%.2f-%.2f", low, high)) |")
}
