import Foundation
import ImageCodec
import Testing
@testable import ImageBudget

@Suite("SSIM")
struct SSIMTests {
    struct Pair: Decodable, Sendable, CustomTestStringConvertible {
        var reference: String
        var distorted: String
        var ssim: Double
        var testDescription: String { distorted }
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/ssim")

    static var pairs: [Pair] {
        (try? JSONDecoder().decode([Pair].self, from: Data(contentsOf: fixtures.appendingPathComponent("expected.json")))) ?? []
    }

    static func plane(_ name: String) throws -> LumaPlane {
        LumaPlane(try ImageDecoder().decode(Data(contentsOf: fixtures.appendingPathComponent(name))))
    }

    @Test("matches scikit-image's structural_similarity on committed pairs", arguments: pairs)
    func matchesScikitImage(_ pair: Pair) throws {
        let value = StructuralSimilarity.score(try Self.plane(pair.reference), try Self.plane(pair.distorted))
        #expect(abs(value - pair.ssim) < 2e-4, "ours \(value), scikit-image \(pair.ssim)")
    }

    @Test("the fixture list is present")
    func fixturesPresent() { #expect(Self.pairs.count == 12) }

    @Test("identical is 1, worse distortion scores lower, and it is symmetric")
    func properties() throws {
        let reference = try Self.plane("kite-reference.png")
        #expect(abs(StructuralSimilarity.score(reference, reference) - 1) < 1e-6)
        let noisy = try Self.plane("kite-noise.png")
        #expect(abs(StructuralSimilarity.score(reference, noisy) - StructuralSimilarity.score(noisy, reference)) < 1e-6)
        let tiny = LumaPlane(try Bitmap(width: 4, height: 4, format: .gray, pixels: [UInt8](repeating: 100, count: 16)))
        #expect(abs(StructuralSimilarity.score(tiny, tiny) - 1) < 1e-9)
    }
}
