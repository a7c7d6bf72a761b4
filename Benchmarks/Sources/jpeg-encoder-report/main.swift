import BenchmarkSupport
import Foundation
import ImageBudget
@_spi(Tuning) import ImageCodec

// The engine's perceptual JPEG encoder against libjpeg-turbo and jpegli, at equal bytes.
//
// Every photo is decoded in full (colour-managed to sRGB) and resampled with Lanczos to each
// size on its longest side; that bitmap is what every encoder gets and what every output is
// scored against (SSIMULACRA2, the engine's implementation). Each encoder runs over a grid of
// qualities (4:2:0, progressive, optimised Huffman tables): libjpeg-turbo as the engine ran it
// before (Annex K tables), the perceptual encoder, and jpegli from files jpegli_encode.py wrote
// from the same pixels (`--jpegli DIR`, made losslessly progressive with jpegtran). At each of
// one encoder's points, another's score at the same bytes is interpolated on its own curve
// (linear in log bytes); the table gives the median and range of those differences over the
// points whose score is in 50...85.
//
// Usage: jpeg-encoder-report [--sizes 640,1280] [--qualities 30,40,...] [--references DIR]
//        [--jpegli DIR] [--tune name=value,...] [--repeat N] [--baseline] DIR|FILE...
// --repeat N times each encode N times, one at a time, the two encoders alternating, and reports
// the medians and their ratio.
// --references writes each resampled bitmap as NAME-SIZE.png (for jpegli_encode.py) and stops.

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String) -> String? {
    guard let flag = arguments.firstIndex(of: name), flag + 1 < arguments.count else { return nil }
    defer { arguments.removeSubrange(flag...(flag + 1)) }
    return arguments[flag + 1]
}
let sizes = (option("--sizes") ?? "640,1280").split(separator: ",").compactMap { Int($0) }
let qualities = (option("--qualities") ?? "30,40,50,60,65,70,75,80,85,90,95").split(separator: ",").compactMap { Int($0) }
let referencesDirectory = option("--references")
let jpegliDirectory = option("--jpegli")
let repeats = Int(option("--repeat") ?? "1") ?? 1
// --baseline: sequential scans, as thumbnails are written by default (progressive otherwise).
let progressive = !arguments.contains("--baseline")
arguments.removeAll { $0 == "--baseline" }
var tuning = PerceptualJPEGTuning.standard
/// The constants --tune may set, by name.
let tuningConstants: [String: WritableKeyPath<PerceptualJPEGTuning, Float>] = [
    "lumaDC": \.lumaDC, "lumaSlope": \.lumaSlope, "lumaPower": \.lumaPower, "chromaDC": \.chromaDC,
    "chromaSlope": \.chromaSlope, "chromaPower": \.chromaPower, "activityLow": \.activityLow,
    "activityHigh": \.activityHigh, "erosion": \.erosion, "flatDeadZone": \.flatDeadZone,
    "maskedDeadZoneLow": \.maskedDeadZoneLow, "maskedDeadZoneHigh": \.maskedDeadZoneHigh,
    "chromaMaskedDeadZone": \.chromaMaskedDeadZone,
]
func usageError(_ message: String) -> Never {
    FileHandle.standardError.write(Data("jpeg-encoder-report: \(message)\n".utf8))
    exit(2)
}
if let assignments = option("--tune") {
    for assignment in assignments.split(separator: ",") {
        let parts = assignment.split(separator: "=")
        guard parts.count == 2, let value = Float(parts[1]) else { usageError("--tune wants NAME=NUMBER, got \(assignment)") }
        guard let constant = tuningConstants[String(parts[0])] else { usageError("unknown tuning constant \(parts[0]) (one of \(tuningConstants.keys.sorted().joined(separator: ", ")))") }
        tuning[keyPath: constant] = value
    }
}
/// Peak memory of one encode, in bytes: a child process (this program with --encode-child)
/// reads the raw pixels, restarts its peak RSS, encodes once and reports how far the peak rose
/// above the RSS it started from. A process of its own because libjpeg allocates outside the
/// engine's ledger, and a fresh one so that little memory freed earlier hides what the encode
/// takes (large blocks go back to the kernel when freed; small ones may be reused).
func childPeak(_ bitmap: Bitmap, encoder: String, quality: Int) throws -> Int {
    let raw = FileManager.default.temporaryDirectory.appendingPathComponent("jpeg-encoder-report-\(UUID().uuidString).rgb")
    defer { try? FileManager.default.removeItem(at: raw) }
    try Data(bitmap.pixels).write(to: raw)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = [
        "--encode-child", encoder, "\(bitmap.width)", "\(bitmap.height)", "\(quality)", progressive ? "1" : "0", raw.path,
        bitmap.format == .gray ? "gray" : "rgb",
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0, let kilobytes = Int(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    else { throw CocoaError(.executableLoad) }
    return kilobytes * 1024
}

/// --encode-child ENCODER WIDTH HEIGHT QUALITY PROGRESSIVE RAWFILE gray|rgb: prints the rise of this
/// process's peak RSS (KiB) over one encode of the RGB pixels in RAWFILE.
func encodeChild(_ arguments: [String]) throws -> Never {
    /// A field of /proc/self/status, in KiB.
    func status(_ field: String) -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    let (width, height, quality) = (Int(arguments[1])!, Int(arguments[2])!, Int(arguments[3])!)
    let pixels = [UInt8](try Data(contentsOf: URL(fileURLWithPath: arguments[5])))
    let bitmap = try Bitmap(width: width, height: height, format: arguments[6] == "gray" ? .gray : .rgb, pixels: pixels)
    let options = JPEGEncodingOptions(
        quality: quality, progressive: arguments[4] == "1", encoder: arguments[0] == "perceptual" ? .perceptual : .libjpegTurbo)
    // Writing 5 to clear_refs restarts the peak (VmHWM) at the current RSS (Linux 4.0+).
    try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let before = status("VmRSS")
    let data = try ImageEncoder.jpeg(bitmap, options: options)
    let after = status("VmHWM")
    withExtendedLifetime(data) { print(after - before) }
    exit(0)
}
if let child = arguments.firstIndex(of: "--encode-child") {
    try encodeChild(Array(arguments[(child + 1)...]))
}

let photos = Photos.files(arguments)
guard !photos.isEmpty else {
    FileHandle.standardError.write(Data("usage: jpeg-encoder-report [--sizes 640,1280] [--qualities Q,...] [--references DIR] [--jpegli DIR] [--tune k=v,...] DIR|FILE...\n".utf8))
    exit(2)
}

struct Point {
    var quality: Int
    var bytes: Int
    var score: Double
}

/// `curve`'s score at `bytes`, linear in log bytes between its neighbours; nil outside it.
func interpolate(_ curve: [Point], at bytes: Int) -> Double? {
    let sorted = curve.sorted { $0.bytes < $1.bytes }
    guard let first = sorted.first, let last = sorted.last, bytes >= first.bytes, bytes <= last.bytes else { return nil }
    for (low, high) in zip(sorted, sorted.dropFirst()) where bytes >= low.bytes && bytes <= high.bytes {
        guard high.bytes > low.bytes else { return max(low.score, high.score) }
        let t = (log(Double(bytes)) - log(Double(low.bytes))) / (log(Double(high.bytes)) - log(Double(low.bytes)))
        return low.score + t * (high.score - low.score)
    }
    return nil
}

/// At `base`'s points scored 50...85, `other`'s score at the same bytes minus `base`'s.
func differences(_ other: [Point], over base: [Point]) -> [Double] {
    base.filter { (50...85).contains($0.score) }.compactMap { point in interpolate(other, at: point.bytes).map { $0 - point.score } }
}

final class Results: @unchecked Sendable {
    let lock = NSLock()
    var rows: [(name: String, size: Int, turbo: [Point], perceptual: [Point], jpegli: [Point], times: (Double, Double), peaks: (Int, Int))] = []
}
let results = Results()
var jobs: [(URL, Int)] = []
for photo in photos { for size in sizes { jobs.append((photo, size)) } }
let decoded = try photos.map { try ImageDecoder().decode(Data(contentsOf: $0)) }
let names = photos.map { $0.deletingPathExtension().lastPathComponent }

struct Context: Sendable {
    let decoded: [Bitmap]
    let names: [String]
    let qualities: [Int]
    let tuning: PerceptualJPEGTuning
    let referencesDirectory: String?
    let jpegliDirectory: String?
    let results: Results
    let repeats: Int
    let progressive: Bool

func run(_ photoIndex: Int, size: Int) throws {
    let full = decoded[photoIndex]
    let scale = Double(size) / Double(max(full.width, full.height))
    let bitmap = try full.resampled(
        width: max(1, Int((Double(full.width) * scale).rounded())), height: max(1, Int((Double(full.height) * scale).rounded()))
    ).flattened()
    let name = names[photoIndex]
    if let referencesDirectory {
        try ImageEncoder.png(bitmap).write(to: URL(fileURLWithPath: referencesDirectory).appendingPathComponent("\(name)-\(size).png"))
        return
    }
    let reference = try SSIMULACRA2.Reference(bitmap)
    func score(_ data: Data) throws -> Double { try SSIMULACRA2.score(reference, try ImageDecoder().decode(data)) }
    var turbo: [Point] = [], perceptual: [Point] = [], jpegli: [Point] = []
    var turboTimes: [Double] = [], perceptualTimes: [Double] = []
    var peaks = (0, 0)
    for quality in qualities {
        let old = JPEGEncodingOptions(quality: quality, progressive: progressive, encoder: .libjpegTurbo)
        let new = JPEGEncodingOptions(quality: quality, progressive: progressive, encoder: .perceptual)
        var oldData = Data(), newData = Data()
        // Alternating, so that a change in the machine's speed meets both encoders alike.
        for _ in 0..<repeats {
            var start = Measure.now()
            oldData = try ImageEncoder.jpeg(bitmap, options: old)
            turboTimes.append(Double(Measure.now() - start) / 1e6)
            start = Measure.now()
            newData = try ImageEncoder.jpeg(bitmap, options: new, tuning: tuning)
            perceptualTimes.append(Double(Measure.now() - start) / 1e6)
        }
        if repeats > 1 {
            peaks = (max(peaks.0, try childPeak(bitmap, encoder: "libjpeg-turbo", quality: quality)),
                     max(peaks.1, try childPeak(bitmap, encoder: "perceptual", quality: quality)))
        }
        turbo.append(Point(quality: quality, bytes: oldData.count, score: try score(oldData)))
        perceptual.append(Point(quality: quality, bytes: newData.count, score: try score(newData)))
        if let jpegliDirectory {
            let file = URL(fileURLWithPath: jpegliDirectory).appendingPathComponent("\(name)-\(size)-q\(quality).jpg")
            if let data = try? Data(contentsOf: file) { jpegli.append(Point(quality: quality, bytes: data.count, score: try score(data))) }
        }
    }
    results.lock.withLock {
        results.rows.append((name, size, turbo, perceptual, jpegli, (Measure.median(turboTimes), Measure.median(perceptualTimes)), peaks))
    }
}
}
let context = Context(
    decoded: decoded, names: names, qualities: qualities, tuning: tuning, referencesDirectory: referencesDirectory,
    jpegliDirectory: jpegliDirectory, results: results, repeats: repeats, progressive: progressive)
let jobList = jobs.map { (photos.firstIndex(of: $0.0)!, $0.1) }

// Timed runs (--repeat > 1) go one at a time, so encoders do not share the cores.
DispatchQueue.concurrentPerform(iterations: repeats > 1 ? 1 : jobList.count) { first in
    for index in repeats > 1 ? Array(jobList.indices) : [first] {
    let (photo, size) = jobList[index]
    do { try context.run(photo, size: size) } catch { FileHandle.standardError.write(Data("\(context.names[photo]): \(error)\n".utf8)) }
    }
}
if referencesDirectory != nil { exit(0) }

func summary(_ values: [Double]) -> String {
    guard !values.isEmpty else { return "–" }
    let range = Measure.range(values)
    return String(format: "%+.2f (%+.2f…%+.2f)", Measure.median(values), range.min, range.max)
}
print("| photo | px | perceptual − libjpeg-turbo | jpegli − libjpeg-turbo | perceptual − jpegli | ms turbo | ms perceptual | time ratio | KB peak turbo | KB peak perceptual | memory ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
var all = (overTurbo: [Double](), jpegliOverTurbo: [Double](), overJpegli: [Double](), timeRatios: [Double](), memoryRatios: [Double]())
for row in results.rows.sorted(by: { ($0.name, $0.size) < ($1.name, $1.size) }) {
    let overTurbo = differences(row.perceptual, over: row.turbo)
    let jpegliOverTurbo = differences(row.jpegli, over: row.turbo)
    let overJpegli = differences(row.perceptual, over: row.jpegli)
    all.overTurbo += overTurbo
    all.jpegliOverTurbo += jpegliOverTurbo
    all.overJpegli += overJpegli
    all.timeRatios.append(row.times.1 / row.times.0)
    all.memoryRatios.append(Double(row.peaks.1) / Double(max(1, row.peaks.0)))
    print("| \(row.name) | \(row.size) | \(summary(overTurbo)) | \(summary(jpegliOverTurbo)) | \(summary(overJpegli)) | \(String(format: "%.2f", row.times.0)) | \(String(format: "%.2f", row.times.1)) | \(String(format: "%.2f×", row.times.1 / row.times.0)) | \(row.peaks.0 / 1000) | \(row.peaks.1 / 1000) | \(String(format: "%.2f×", Double(row.peaks.1) / Double(max(1, row.peaks.0)))) |")
}
let timeRange = Measure.range(all.timeRatios)
let memoryRange = Measure.range(all.memoryRatios)
print("| **all** | | \(summary(all.overTurbo)) | \(summary(all.jpegliOverTurbo)) | \(summary(all.overJpegli)) | | | \(String(format: "%.2f× (%.2f…%.2f)", Measure.median(all.timeRatios), timeRange.min, timeRange.max)) | | | \(String(format: "%.2f× (%.2f…%.2f)", Measure.median(all.memoryRatios), memoryRange.min, memoryRange.max)) |")
print("")
// What a quality number means: the perceptual encoder against libjpeg-turbo at the same number.
print("| quality | perceptual bytes / libjpeg-turbo's | perceptual SSIMULACRA2 − libjpeg-turbo's |")
print("|---|---|---|")
for quality in qualities {
    var ratios: [Double] = [], gaps: [Double] = []
    for row in results.rows {
        guard let old = row.turbo.first(where: { $0.quality == quality }), let new = row.perceptual.first(where: { $0.quality == quality })
        else { continue }
        ratios.append(Double(new.bytes) / Double(old.bytes))
        gaps.append(new.score - old.score)
    }
    guard !ratios.isEmpty else { continue }
    print(String(format: "| %d | %.2f | %+.2f |", quality, Measure.median(ratios), Measure.median(gaps)))
}
