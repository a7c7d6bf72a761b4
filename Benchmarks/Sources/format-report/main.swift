import BenchmarkSupport
import Foundation
import ImageBudget
import ImageCodec

// Bytes at equal quality: what WebP and AVIF thumbnails weigh when they look as good as the
// JPEG the engine would send. Every photo is decoded in full (colour-managed to sRGB) and
// resampled with Lanczos to SIZE px on its longest side; that bitmap is what each encoder gets
// and what each output is scored against (SSIMULACRA2, the engine's own implementation).
// JPEG at --jpeg-quality sets the bar; for WebP and AVIF, bisection finds the lowest quality
// whose score reaches the JPEG's, and reports its bytes and encode time (median of 5 encodes,
// one thread) beside the JPEG's. The formats' default qualities (WebP 79, AVIF 63) are scored
// too, to show where they sit.
//
// Usage: format-report [--size PX] [--jpeg-quality Q] [--avif-speed S] [--webp-method M] [--webp-sharp-yuv 0|1] DIR|FILE...
// (the encoders' settings default to the engine's; the flags are for trying others)

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String, default value: Int) -> Int {
    guard let flag = arguments.firstIndex(of: name), flag + 1 < arguments.count, let parsed = Int(arguments[flag + 1]) else {
        return value
    }
    arguments.removeSubrange(flag...(flag + 1))
    return parsed
}
let size = option("--size", default: 512)
let jpegQuality = option("--jpeg-quality", default: 80)
let avifSpeed = option("--avif-speed", default: AVIFEncodingOptions().speed)
let webpMethod = option("--webp-method", default: WebPEncodingOptions().method)
let webpSharpYUV = option("--webp-sharp-yuv", default: WebPEncodingOptions().sharpYUV ? 1 : 0) != 0
let photos = Photos.files(arguments)
guard !photos.isEmpty else {
    FileHandle.standardError.write(Data("usage: format-report [--size PX] [--jpeg-quality Q] [--avif-speed S] [--webp-method M] [--webp-sharp-yuv 0|1] DIR|FILE...\n".utf8))
    exit(2)
}

struct Encoded {
    var quality: Int
    var bytes: Int
    var score: Double
    var milliseconds: Double
}

/// Encodes `bitmap` as `format` at `quality`: its bytes, its score against `reference` and the
/// median encode time.
@MainActor func encode(_ bitmap: Bitmap, _ format: ImageFormat, quality: Int, reference: SSIMULACRA2.Reference) throws -> Encoded {
    let jpeg = JPEGEncodingOptions(quality: quality)
    let webp = WebPEncodingOptions(quality: quality, method: webpMethod, sharpYUV: webpSharpYUV)
    let avif = AVIFEncodingOptions(quality: quality, speed: avifSpeed)
    var data = Data()
    var times: [Double] = []
    for _ in 0..<5 {
        let start = Measure.now()
        data = try ImageEncoder.encode(bitmap, as: format, jpegOptions: jpeg, webpOptions: webp, avifOptions: avif)
        times.append(Double(Measure.now() - start) / 1e6)
    }
    let decoded = try ImageDecoder().decode(data)
    return try Encoded(quality: quality, bytes: data.count, score: SSIMULACRA2.score(reference, decoded), milliseconds: Measure.median(times))
}

/// The lowest quality whose score reaches `target` (the score is not strictly monotonic in the
/// quality, so the answer is the bisection's, checked: it reaches the target or is 100).
@MainActor func matching(_ bitmap: Bitmap, _ format: ImageFormat, target: Double, reference: SSIMULACRA2.Reference) throws -> Encoded {
    var low = 1, high = 100
    var best = try encode(bitmap, format, quality: high, reference: reference)
    while low < high {
        let middle = (low + high) / 2
        let candidate = try encode(bitmap, format, quality: middle, reference: reference)
        if candidate.score >= target {
            best = candidate
            high = middle
        } else {
            low = middle + 1
        }
    }
    return best.quality == low ? best : try encode(bitmap, format, quality: low, reference: reference)
}

func kib(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1024) }

print("\(photos.count) photos, \(size) px on the longest side (full decode + Lanczos), JPEG q\(jpegQuality) 4:2:0 as the bar; "
    + "WebP method \(webpMethod)\(webpSharpYUV ? " sharp YUV" : ""), AVIF speed \(avifSpeed); SSIMULACRA2; encode times are medians of 5, one thread\n")
print("| photo | JPEG q\(jpegQuality): KiB, score, ms | WebP matched: q, KiB, score, ms | AVIF matched: q, KiB, score, ms "
    + "| WebP q79: KiB, score | AVIF q63: KiB, score |")
print("|---|---|---|---|---|---|")
var totals = (jpeg: 0, webp: 0, avif: 0, webpDefault: 0, avifDefault: 0)
var times = (jpeg: [Double](), webp: [Double](), avif: [Double]())
var ratios = (webp: [Double](), avif: [Double]())
var qualities = (webp: [Double](), avif: [Double]())
var defaultGaps = (webp: [Double](), avif: [Double]())
for photo in photos {
    let full = try ImageDecoder().decode(Data(contentsOf: photo))
    let scale = Double(size) / Double(max(full.width, full.height))
    let bitmap = try full.resampled(width: max(1, Int((Double(full.width) * scale).rounded())),
                                    height: max(1, Int((Double(full.height) * scale).rounded())))
    let reference = try SSIMULACRA2.Reference(bitmap.flattened())
    let jpeg = try encode(bitmap, .jpeg, quality: jpegQuality, reference: reference)
    let webp = try matching(bitmap, .webp, target: jpeg.score, reference: reference)
    let avif = try matching(bitmap, .avif, target: jpeg.score, reference: reference)
    let webpDefault = try encode(bitmap, .webp, quality: WebPEncodingOptions().quality, reference: reference)
    let avifDefault = try encode(bitmap, .avif, quality: AVIFEncodingOptions().quality, reference: reference)
    totals.jpeg += jpeg.bytes
    totals.webp += webp.bytes
    totals.avif += avif.bytes
    totals.webpDefault += webpDefault.bytes
    totals.avifDefault += avifDefault.bytes
    times.jpeg.append(jpeg.milliseconds)
    times.webp.append(webp.milliseconds)
    times.avif.append(avif.milliseconds)
    ratios.webp.append(Double(webp.bytes) / Double(jpeg.bytes))
    ratios.avif.append(Double(avif.bytes) / Double(jpeg.bytes))
    qualities.webp.append(Double(webp.quality))
    qualities.avif.append(Double(avif.quality))
    defaultGaps.webp.append(webpDefault.score - jpeg.score)
    defaultGaps.avif.append(avifDefault.score - jpeg.score)
    func cell(_ encoded: Encoded, quality: Bool) -> String {
        (quality ? "q\(encoded.quality), " : "") + "\(kib(encoded.bytes)), \(String(format: "%.1f", encoded.score)), "
            + String(format: "%.1f", encoded.milliseconds)
    }
    print("| \(photo.lastPathComponent) (\(bitmap.width)×\(bitmap.height)) | \(cell(jpeg, quality: false)) | \(cell(webp, quality: true)) "
        + "| \(cell(avif, quality: true)) | \(kib(webpDefault.bytes)), \(String(format: "%.1f", webpDefault.score)) "
        + "| \(kib(avifDefault.bytes)), \(String(format: "%.1f", avifDefault.score)) |")
}
print()
@MainActor func ratio(_ value: Int) -> String { String(format: "%.2f×", Double(value) / Double(totals.jpeg)) }
func range(_ values: [Double], _ format: String = "%.2f") -> String {
    let (low, high) = Measure.range(values)
    return "\(String(format: format, Measure.median(values))) (\(String(format: format, low))–\(String(format: format, high)))"
}
print("| at JPEG q\(jpegQuality)'s SSIMULACRA2 | JPEG | WebP | AVIF |")
print("|---|---|---|---|")
print("| bytes, all photos | \(kib(totals.jpeg)) KiB | \(kib(totals.webp)) KiB (\(ratio(totals.webp))) | \(kib(totals.avif)) KiB (\(ratio(totals.avif))) |")
print("| bytes ÷ JPEG's, per photo: median (range) | 1 | \(range(ratios.webp)) | \(range(ratios.avif)) |")
print("| quality that matches: median (range) | \(jpegQuality) | \(range(qualities.webp, "%.0f")) | \(range(qualities.avif, "%.0f")) |")
print("| encode time, ms: median (range) | \(range(times.jpeg, "%.1f")) | \(range(times.webp, "%.1f")) | \(range(times.avif, "%.1f")) |")
print("| default quality: bytes ÷ JPEG's; score − JPEG's, median (range) | – | \(ratio(totals.webpDefault)); \(range(defaultGaps.webp, "%+.1f")) "
    + "| \(ratio(totals.avifDefault)); \(range(defaultGaps.avif, "%+.1f")) |")
