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

    /// The committed pairs; a missing or unreadable list fails the tests that use it.
    static func pairs() throws -> [Pair] {
        try JSONDecoder().decode([Pair].self, from: Data(contentsOf: fixtures.appendingPathComponent("expected.json")))
    }

    static func plane(_ name: String) throws -> LumaPlane {
        try LumaPlane(ImageDecoder().decode(Data(contentsOf: fixtures.appendingPathComponent(name))))
    }

    @Test("matches scikit-image's structural_similarity on committed pairs", arguments: try pairs())
    func matchesScikitImage(_ pair: Pair) throws {
        let value = StructuralSimilarity.score(try Self.plane(pair.reference), try Self.plane(pair.distorted))
        #expect(abs(value - pair.ssim) < 2e-4, "ours \(value), scikit-image \(pair.ssim)")
    }

    @Test("the fixture list holds 6 distortions of each of 3 photos, none compared with itself")
    func fixturesPresent() throws {
        let pairs = try Self.pairs()
        #expect(pairs.count == 18)
        #expect(pairs.allSatisfy { $0.reference != $0.distorted })
    }

    @Test("identical is 1, more of a distortion scores lower, and it is symmetric")
    func properties() throws {
        for photo in ["kite", "path", "grey"] {
            let reference = try Self.plane("\(photo)-reference.png")
            #expect(abs(StructuralSimilarity.score(reference, reference) - 1) < 1e-6)
            // Each pair: a milder and a stronger version of the same distortion.
            for (mild, strong) in [("jpeg50", "jpeg15"), ("blur06", "blur"), ("noise4", "noise")] {
                let mildScore = StructuralSimilarity.score(reference, try Self.plane("\(photo)-\(mild).png"))
                let strongScore = StructuralSimilarity.score(reference, try Self.plane("\(photo)-\(strong).png"))
                #expect(mildScore > strongScore + 0.01, "\(photo): \(mild) \(mildScore) vs \(strong) \(strongScore)")
                #expect(strongScore < 0.999)
            }
            let noisy = try Self.plane("\(photo)-noise.png")
            #expect(abs(StructuralSimilarity.score(reference, noisy) - StructuralSimilarity.score(noisy, reference)) < 1e-6)
        }
        let tiny = try LumaPlane(Bitmap(width: 4, height: 4, format: .gray, pixels: [UInt8](repeating: 100, count: 16)))
        #expect(abs(StructuralSimilarity.score(tiny, tiny) - 1) < 1e-9)
    }
}
