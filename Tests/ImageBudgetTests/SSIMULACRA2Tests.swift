import Foundation
import ImageCodec
import Testing
@testable import ImageBudget

@Suite("SSIMULACRA2")
struct SSIMULACRA2Tests {
    struct Pair: Decodable, Sendable, CustomTestStringConvertible {
        var reference: String
        var distorted: String
        var ssimulacra2: Double
        var testDescription: String { distorted }
    }

    struct Expected: Decodable {
        var scorer: String
        var pairs: [Pair]
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/ssimulacra2")

    /// The committed pairs, scored by the PyPI package (`make_fixtures.py`); a missing or
    /// unreadable list fails the tests that use it.
    static func pairs() throws -> [Pair] {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: fixtures.appendingPathComponent("expected.json"))).pairs
    }

    static func bitmap(_ name: String) throws -> Bitmap {
        try ImageDecoder().decode(Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    @Test("within ±1.0 of the PyPI ssimulacra2 package on committed pairs", arguments: try pairs())
    func matchesPyPIPackage(_ pair: Pair) throws {
        let value = try SSIMULACRA2.score(Self.bitmap(pair.reference), try Self.bitmap(pair.distorted))
        #expect(abs(value - pair.ssimulacra2) <= 1.0, "ours \(value), ssimulacra2 (PyPI) \(pair.ssimulacra2)")
    }

    @Test("the fixtures: at least 20 pairs from 3 or more photos, spanning 20 to 90, none compared with itself")
    func fixturesPresent() throws {
        let pairs = try Self.pairs()
        #expect(pairs.count >= 20)
        #expect(Set(pairs.map(\.reference)).count >= 3)
        #expect(pairs.contains { $0.ssimulacra2 <= 20 } && pairs.contains { $0.ssimulacra2 >= 90 })
        #expect(pairs.allSatisfy { $0.reference != $0.distorted })
    }

    @Test(
        "an image against itself scores 100, colour or gray, whatever its number of scales",
        arguments: [
            "kite-reference.png", "colorfulcups-reference.png", "grey-reference.png"
        ])
    func identical(_ name: String) throws {
        let image = try Self.bitmap(name)
        #expect(try abs(SSIMULACRA2.score(image, image) - 100) <= 0.01)
    }

    @Test("a chroma-only blur lowers the score where luma SSIM barely moves", arguments: ["kite", "colorfulcups", "path"])
    func seesColour(_ stem: String) throws {
        let (reference, distorted) = (try Self.bitmap("\(stem)-reference.png"), try Self.bitmap("\(stem)-chroma-blur.png"))
        let luma = try StructuralSimilarity.score(LumaPlane(reference), LumaPlane(distorted))
        let score = try SSIMULACRA2.score(reference, distorted)
        #expect(luma > 0.99, "luma SSIM \(luma)")
        #expect(score < 80, "SSIMULACRA2 \(score)")
    }

    @Test("the score falls as JPEG quality falls", arguments: ["kite", "colorfulcups", "path"])
    func fallsWithQuality(_ stem: String) throws {
        let reference = try SSIMULACRA2.Reference(Self.bitmap("\(stem)-reference.png"))
        let scores = try [90, 75, 50, 30, 10].map { try SSIMULACRA2.score(reference, Self.bitmap("\(stem)-q\($0)-420.jpg")) }
        #expect(zip(scores, scores.dropFirst()).allSatisfy { $0 > $1 }, "\(scores)")
    }

    @Test("a prepared reference gives the score a one-off comparison gives, for every pair")
    func preparedReference() throws {
        for pair in try Self.pairs().prefix(6) {
            let (reference, distorted) = (try Self.bitmap(pair.reference), try Self.bitmap(pair.distorted))
            #expect(try SSIMULACRA2.score(SSIMULACRA2.Reference(reference), distorted) == SSIMULACRA2.score(reference, distorted))
        }
    }

    @Test("halving averages 2×2 blocks, and only the pixels that exist at odd edges")
    func halving() {
        let plane: [Float] = [
            1, 3, 5,
            7, 9, 11,
            13, 15, 17
        ]
        let half = ColorPlanes(width: 3, height: 3, planes: [plane, plane, plane]).halved()
        #expect(half.width == 2 && half.height == 2)
        #expect(half.planes[0] == [5, 8, 14, 17])
    }

    @Test("XYB's fast cube root agrees with cbrt to float precision over the range XYB uses")
    func cubeRoot() {
        // Grey: every opsin row sums to 1, so Y − 0.01 is ∛(v + bias) − ∛bias.
        var values: [Float] = [0]
        var value: Float = 1e-4
        while value < 2 {
            values.append(value)
            value *= 1.37
        }
        var planes = ColorPlanes(width: values.count, height: 1, planes: [values, values, values])
        planes.convertToPositiveXYB()
        for (index, value) in values.enumerated() {
            let bias = Double(ColorPlanes.opsinBias)
            let expected = cbrt(Double(value) + bias) - cbrt(bias)
            #expect(abs(Double(planes.planes[1][index]) - 0.01 - expected) <= 2e-6 * cbrt(Double(value) + bias) + 1e-6, "\(value)")
        }
    }
}
