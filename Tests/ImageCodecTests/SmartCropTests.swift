import Foundation
import TestSupport
import Testing
@testable import ImageCodec

/// `Gravity.smart`: the attention crop keeps an off-centre subject that a centre crop cuts off.
@Suite("Resize: smart (attention) crops")
struct SmartCropTests {
    /// A white sweep with an orange, checkered product whose centre is at (`x`, `y`) (fractions),
    /// `side` pixels square: edges and saturated colour, where the rest has neither.
    static func product(width: Int, height: Int, x: Double, y: Double, side: Int) -> Bitmap {
        let (centreX, centreY) = (Int(x * Double(width)), Int(y * Double(height)))
        return TestImages.make(width: width, height: height, format: .rgb) { px, py in
            guard abs(px - centreX) < side / 2, abs(py - centreY) < side / 2 else { return [246, 246, 244] }
            return (px / 12 + py / 12) % 2 == 0 ? [240, 110, 20] : [120, 40, 10]
        }
    }

    /// Pixels of the product's orange (or its dark squares) in `bitmap`.
    static func productPixels(_ bitmap: Bitmap) -> Int {
        stride(from: 0, to: bitmap.pixels.count, by: 3).filter { at in
            Int(bitmap.pixels[at]) - Int(bitmap.pixels[at + 2]) > 80
        }.count
    }

    @Test("a fill with smart gravity keeps the product a centre crop cuts off, across and down", arguments: [false, true])
    func keepsTheOffCentreProduct(png: Bool) throws {
        let encode: (Bitmap) throws -> Data = { png ? try ImageEncoder.png($0) : try TestImages.faithfulJPEG($0) }
        let cases: [(Bitmap, String)] = [
            (Self.product(width: 900, height: 450, x: 0.9, y: 0.5, side: 140), "right"),
            (Self.product(width: 450, height: 900, x: 0.5, y: 0.1, side: 140), "top"),
            (Self.product(width: 1200, height: 400, x: 0.12, y: 0.6, side: 120), "left")
        ]
        for (image, place) in cases {
            let data = try encode(image)
            let smart = try ImageDecoder(options: DecodingOptions(resize: .fill(width: 200, height: 200, gravity: .smart))).decode(data)
            let centre = try ImageDecoder(options: DecodingOptions(resize: .fill(width: 200, height: 200))).decode(data)
            #expect((smart.width, smart.height) == (200, 200))
            #expect(Self.productPixels(centre) == 0, "\(place): the centre crop should miss the product")
            // The product's whole area at the output's scale: side × 200 / the crop's side.
            let crop = Double(min(image.width, image.height))
            let side = Double(image.width == 1200 ? 120 : 140) * 200 / crop
            #expect(Double(Self.productPixels(smart)) > 0.8 * side * side, "\(place): \(Self.productPixels(smart)) product pixels")
        }
    }

    /// Windows libvips 8.14.1 chose (`vips thumbnail` to the size that covers the box, then
    /// `vips smartcrop --interesting attention`; `Benchmarks/scripts/smartcrop.py`), as the
    /// left and top of the box in the photo scaled to cover it; each photo moved off the centre.
    static let libvipsWindows: [(file: String, box: (Int, Int), window: (Int, Int))] = [
        ("Wine.jpg", (400, 225), (0, 56)), ("LadyBird.jpg", (320, 400), (320, 0)), ("SafeLanding.jpg", (320, 400), (391, 0)),
        ("TwoWings.jpg", (400, 400), (200, 0)), ("firstgeneration.jpg", (400, 400), (198, 0)), ("Dragonfly.jpg", (320, 400), (213, 0))
    ]

    @Test("on real photos, the window is libvips' attention window to within one grid cell")
    func matchesLibvips() throws {
        for (file, box, expected) in Self.libvipsWindows {
            let data = try TestImages.sample(file)
            let header = try ImageDecoder.header(of: data)
            let (width, height) = (Double(header.displayWidth), Double(header.displayHeight))
            let scale = max(Double(box.0) / width, Double(box.1) / height)
            let scaled = (width: (width * scale).rounded(), height: (height * scale).rounded())
            let crop = (width: Double(box.0) / scaled.width, height: Double(box.1) / scaled.height)
            let small = try ImageDecoder(options: DecodingOptions(resize: .maxPixelSize(AttentionFocus.analysisSide))).decode(data)
            guard case .focus(let x, let y) = try AttentionFocus.focus(in: small, crop: crop) else {
                Issue.record("\(file): not a focus point")
                continue
            }
            let left = min(max(x * scaled.width - Double(box.0) / 2, 0), scaled.width - Double(box.0))
            let top = min(max(y * scaled.height - Double(box.1) / 2, 0), scaled.height - Double(box.1))
            let cell = (scaled.width / Double(AttentionFocus.grid), scaled.height / Double(AttentionFocus.grid))
            #expect(abs(left - Double(expected.0)) <= cell.0 && abs(top - Double(expected.1)) <= cell.1, "\(file) \(box): (\(left), \(top))")
        }
    }

    @Test("smart gravity is part of the resize's key, and means nothing where nothing is cropped")
    func keyAndFit() throws {
        #expect(Resize.fill(width: 10, height: 10, gravity: .smart).description == "fill:10x10:smart")
        #expect(Resize(mode: .fit, width: 10, height: 10, gravity: .smart) == .fit(width: 10, height: 10))
        #expect(Gravity("smart") == .smart)
    }

    @Test("the plan of a smart crop counts the analysis decode when that is the larger")
    func planCountsTheAnalysis() throws {
        let data = try ImageEncoder.png(Self.product(width: 1800, height: 900, x: 0.9, y: 0.5, side: 200))
        let source = try ImageSource(data: data)
        let smart = try source.plan(DecodingOptions(resize: .fill(width: 16, height: 16, gravity: .smart)))
        let centre = try source.plan(DecodingOptions(resize: .fill(width: 16, height: 16)))
        let analysis = try source.plan(DecodingOptions(resize: .maxPixelSize(AttentionFocus.analysisSide)))
        #expect(smart.memoryBytes > analysis.memoryBytes && analysis.memoryBytes > centre.memoryBytes)
        #expect((smart.width, smart.height) == (16, 16))
    }
}
