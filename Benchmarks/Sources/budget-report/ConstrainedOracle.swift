import Foundation
import ImageBudget
import ImageCodec

/// What any allocator could reach on a set under the issue's luma limit: SSIMULACRA2 max-min
/// over every candidate of a wide grid (the allocator's sizes, qualities every 3, chroma 4:2:0
/// with its table at the luma quality or 15/30 finer or 15 coarser, and 4:4:4), each image's
/// luma SSIM at least `ssimFloor`. Every candidate is scored, by the benchmark's scorer, so it
/// is slow by design (about 300 scores a photo).
enum ConstrainedOracle {
    struct Candidate: Sendable {
        var label: String
        var bytes: Int
        var ssim: Double
        var ssimulacra2: Double
    }

    static let variants: [(chroma: JPEGEncodingOptions.ChromaSubsampling, offset: Int)] = [(.s420, 0), (.s420, 15), (.s420, 30), (.s420, -15), (.s444, 0)]

    static func candidates(_ file: Data, reference: DisplayScore.Reference, options: UploadBudgetOptions) throws -> [Candidate] {
        let display = try ImageDecoder(options: DecodingOptions(maxPixelSize: options.maxPixelSize)).decode(file)
        let longest = max(display.width, display.height)
        let sides = Set([1.0, 0.75, 0.5].map { min(longest, max(options.minPixelSize, Int((Double(options.maxPixelSize) * $0).rounded()))) }).sorted()
        let bitmaps = try sides.map { try display.downsampled(maxPixelSize: $0) }
        let jobs = sides.indices.flatMap { side in
            stride(from: options.qualityRange.lowerBound, through: options.qualityRange.upperBound, by: 3).flatMap { quality in
                variants.indices.map { (side: side, quality: quality, variant: $0) }
            }
        }
        let results = UnsafeMutableBufferPointer<Candidate?>.allocate(capacity: jobs.count)
        results.initialize(repeating: nil)
        defer { results.deallocate() }
        let failures = UnsafeMutableBufferPointer<Bool>.allocate(capacity: jobs.count)
        failures.initialize(repeating: false)
        defer { failures.deallocate() }
        nonisolated(unsafe) let (out, failed) = (results, failures)
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let job = jobs[index]
            let variant = variants[job.variant]
            let chromaQuality = variant.offset == 0 ? nil : min(max(job.quality + variant.offset, 20), 95)
            do {
                let data = try ImageEncoder.jpeg(bitmaps[job.side], options: JPEGEncodingOptions(
                    quality: job.quality, chromaSubsampling: variant.chroma, progressive: true, preservesICCProfile: false,
                    quantization: options.quantization, chromaQuality: chromaQuality))
                let score = try DisplayScore.score(data, against: reference)
                let label = "\(sides[job.side])px q\(job.quality) \(variant.chroma == .s444 ? "4:4:4" : "4:2:0")"
                    + (chromaQuality.map { "@c\($0)" } ?? "")
                out[index] = Candidate(label: label, bytes: data.count, ssim: score.ssim, ssimulacra2: score.ssimulacra2)
            } catch {
                failed[index] = true
            }
        }
        if failures.contains(true) { throw ImageCodecError.encodingFailed("constrained oracle: an encode failed") }
        return results.compactMap { $0 }
    }

    /// The highest worst SSIMULACRA2 whose cheapest candidates (each with SSIM ≥ `ssimFloor`)
    /// fit, and those candidates; nil when even the cheapest do not.
    static func choose(_ candidates: [[Candidate]], budget: Int, ssimFloor: Double) -> [Candidate]? {
        let allowed = candidates.map { $0.filter { $0.ssim >= ssimFloor } }
        for threshold in Set(allowed.flatMap { $0.map(\.ssimulacra2) }).sorted(by: >) {
            let choice = allowed.compactMap { $0.filter { $0.ssimulacra2 >= threshold }.min { $0.bytes < $1.bytes } }
            if choice.count == candidates.count && choice.reduce(0, { $0 + $1.bytes }) <= budget { return choice }
        }
        return nil
    }
}
