import Foundation
import ImageBudget
import ImageCodec

/// The two usual ways of meeting an upload budget, as the reference for the allocator.
///
/// Every strategy encodes the way the allocator does (progressive, optimised Huffman, no ICC
/// profile, the standard tables unless a row says otherwise), so a row differs from another
/// only in how bytes are allocated.
enum Strategies {
    /// The allocator's JPEG settings at `quality`.
    static func encoding(_ quality: Int) -> JPEGEncodingOptions {
        JPEGEncodingOptions(quality: quality, progressive: true, preservesICCProfile: false)
    }

    struct Output {
        var data: [Data]
        var encodes: Int
    }

    /// Budget/N per image: q85, shrinking the longest side by 10% until it fits, from the
    /// full-size original (decoded once here, which is kinder than most client code).
    static func naiveSplit(_ files: [Data], budget: Int) throws -> Output {
        let share = budget / files.count
        var outputs: [Data] = []
        var encodes = 0
        for file in files {
            let original = try ImageDecoder().decode(file)
            var side = max(original.width, original.height)
            var encoded = try ImageEncoder.jpeg(original, options: encoding(85))
            encodes += 1
            while encoded.count > share && side > 16 {
                side = side * 9 / 10
                encoded = try ImageEncoder.jpeg(original.downsampled(maxPixelSize: side), options: encoding(85))
                encodes += 1
            }
            outputs.append(encoded)
        }
        return Output(data: outputs, encodes: encodes)
    }

    /// One quality for all images at 1280 px: the highest whose total fits (bisection).
    static func sharedQuality(_ files: [Data], budget: Int, maxPixelSize: Int = 1280) throws -> Output {
        let bitmaps = try files.map { try ImageDecoder(options: DecodingOptions(maxPixelSize: maxPixelSize)).decode($0) }
        var encodes = 0
        func encodeAll(_ quality: Int) throws -> [Data] {
            encodes += bitmaps.count
            return try bitmaps.map { try ImageEncoder.jpeg($0, options: encoding(quality)) }
        }
        var (low, high) = (1, 100)
        var best = try encodeAll(1)
        while low < high {
            let middle = (low + high + 1) / 2
            let attempt = try encodeAll(middle)
            if attempt.reduce(0, { $0 + $1.count }) <= budget {
                (low, best) = (middle, attempt)
            } else {
                high = middle - 1
            }
        }
        return Output(data: best, encodes: encodes)
    }
}

/// Scores at display size: output and source (full decode) both resized with Lanczos so the
/// longest side is 1280 px; SSIM on luma, SSIMULACRA2 in colour.
enum DisplayScore {
    struct Reference {
        var luma: StructuralSimilarity.Reference
        var colour: SSIMULACRA2.Reference
    }

    static func reference(_ file: Data) throws -> Reference {
        let display = try ImageDecoder().decode(file).downsampled(maxPixelSize: 1280)
        return try Reference(luma: StructuralSimilarity.Reference(LumaPlane(display)), colour: SSIMULACRA2.Reference(display))
    }

    static func score(_ output: Data, against reference: Reference) throws -> (ssim: Double, ssimulacra2: Double) {
        let decoded = try ImageDecoder().decode(output)
        let display = try decoded.resampled(width: reference.colour.width, height: reference.colour.height)
        return try (StructuralSimilarity.score(reference.luma, LumaPlane(display)), SSIMULACRA2.score(reference.colour, display))
    }
}

/// The oracle the issue measures against: SSIMULACRA2 max-min over 4:2:0 candidates only (the
/// allocator's sizes, qualities every 3 over its range), every candidate scored — what the best
/// quality search can reach without choosing chroma. Slow by design (about 60 scores a photo).
enum QualityOnlyOracle {
    struct Candidate {
        var data: Data
        var ssimulacra2: Double
    }

    static func candidates(_ file: Data, reference: DisplayScore.Reference, options: UploadBudgetOptions) throws -> [Candidate] {
        let display = try ImageDecoder(options: DecodingOptions(maxPixelSize: options.maxPixelSize)).decode(file)
        let longest = max(display.width, display.height)
        let sides = Set([1.0, 0.75, 0.5].map { min(longest, max(options.minPixelSize, Int((Double(options.maxPixelSize) * $0).rounded()))) })
        var result: [Candidate] = []
        for side in sides {
            let bitmap = try display.downsampled(maxPixelSize: side)
            for quality in stride(from: options.qualityRange.lowerBound, through: options.qualityRange.upperBound, by: 3) {
                let data = try ImageEncoder.jpeg(bitmap, options: JPEGEncodingOptions(quality: quality, progressive: true,
                                                                                      preservesICCProfile: false, quantization: options.quantization))
                result.append(Candidate(data: data, ssimulacra2: try DisplayScore.score(data, against: reference).ssimulacra2))
            }
        }
        return result
    }

    /// The highest worst score whose cheapest candidates fit, and those candidates.
    static func choose(_ candidates: [[Candidate]], budget: Int) -> [Data] {
        for threshold in Set(candidates.flatMap { $0.map(\.ssimulacra2) }).sorted(by: >) {
            let choice = candidates.compactMap { $0.filter { $0.ssimulacra2 >= threshold }.min { $0.data.count < $1.data.count } }
            if choice.count == candidates.count && choice.reduce(0, { $0 + $1.data.count }) <= budget { return choice.map(\.data) }
        }
        return candidates.map { $0.min { $0.data.count < $1.data.count }!.data }
    }
}
