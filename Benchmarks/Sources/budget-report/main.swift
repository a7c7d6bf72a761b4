import Foundation
import ImageBudget
import ImageCodec

// Naive split vs one shared quality vs the allocator, on sets of 1, 3 and 5 sample photos of
// 8 MP or more, budget 300,000 bytes. Scores are SSIM at display size against a full decode.
// Wall times are medians of 3 runs, each including decoding.

let samples = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "SampleImages")
let names = ["SafeLanding.jpg", "Honeywave.jpg", "MilkyWay-q90.jpg", "the-mouse.jpg", "firstgeneration.jpg"]
let sets = [Array(names.prefix(1)), [names[0], names[1], names[3]], names]
let budget = 300_000

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func timed<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
    var results: [T] = []
    var times: [Double] = []
    for _ in 0..<3 {
        let start = DispatchTime.now().uptimeNanoseconds
        results.append(try await body())
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return (results[0], median(times))
}

print("| set | method | total bytes | min SSIM | mean SSIM | wall | encodes |")
print("|---|---|---|---|---|---|---|")
var summary: [String] = []
for set in sets {
    let files = try set.map { try Data(contentsOf: samples.appendingPathComponent($0)) }
    let references = try files.map(DisplayScore.reference)
    func report(_ method: String, _ outputs: [Data], wall: Double, encodes: Int) throws -> (Double, Double) {
        let scores = try zip(outputs, references).map { try DisplayScore.score($0, against: $1) }
        let (minimum, mean) = (scores.min() ?? 0, scores.reduce(0, +) / Double(scores.count))
        let total = outputs.reduce(0) { $0 + $1.count }
        print("| \(set.count) | \(method) | \(total) | \(String(format: "%.4f", minimum)) | \(String(format: "%.4f", mean)) | "
              + "\(String(format: "%.2f", wall)) s | \(encodes) |")
        return (minimum, mean)
    }
    let (naive, naiveWall) = try await timed { try Strategies.naiveSplit(files, budget: budget) }
    let naiveScores = try report("naive split (budget/N, q85, −10% steps)", naive.data, wall: naiveWall, encodes: naive.encodes)
    let (shared, sharedWall) = try await timed { try Strategies.sharedQuality(files, budget: budget) }
    let sharedScores = try report("one shared quality at 1280 px", shared.data, wall: sharedWall, encodes: shared.encodes)
    let compressor = UploadCompressor(options: UploadBudgetOptions(budget: budget))
    let (ours, oursWall) = try await timed { try await compressor.compress(files.enumerated().map { .data($1, name: set[$0]) }) }
    let oursScores = try report("allocator (this engine)", ours.images.map(\.data), wall: oursWall, encodes: ours.encodeCount)
    summary.append("\(set.count) photos: worst SSIM \(String(format: "%+.4f", oursScores.0 - naiveScores.0)) vs naive, "
                   + "\(String(format: "%+.4f", oursScores.0 - sharedScores.0)) vs shared; mean "
                   + "\(String(format: "%+.4f", oursScores.1 - sharedScores.1)) vs shared")
}
print()
for line in summary { print(line) }
