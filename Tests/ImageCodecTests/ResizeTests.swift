import Foundation
import Testing
@testable import ImageCodec

/// Output sizes and crops of every resize mode over a matrix of source shapes, worked out by
/// hand (not by the formula under test), and the text forms of resizes and gravities.
@Suite("Resize: sizes and crops")
struct ResizeTests {
    struct Case: CustomStringConvertible, Sendable {
        let resize: Resize
        let source: (Int, Int)
        let output: (Int, Int)
        /// x, y, width, height of the crop in source pixels; nil: the whole source.
        let crop: (Double, Double, Double, Double)?
        var description: String { "\(resize) on \(source.0)×\(source.1)" }
    }

    static let box = (400, 400)

    static func fillDownEnlarged(_ width: Int, _ height: Int) -> Resize {
        Resize(mode: .fillDown, width: width, height: height, enlarge: true)
    }
    static let cases: [Case] = [
        // Landscape 4:3.
        Case(resize: .fit(width: 400, height: 400), source: (4000, 3000), output: (400, 300), crop: nil),
        Case(resize: .fill(width: 400, height: 400), source: (4000, 3000), output: (400, 400), crop: (500, 0, 3000, 3000)),
        Case(resize: .fillDown(width: 400, height: 400), source: (4000, 3000), output: (400, 400), crop: (500, 0, 3000, 3000)),
        Case(resize: .force(width: 400, height: 400), source: (4000, 3000), output: (400, 400), crop: nil),
        // Portrait 3:4.
        Case(resize: .fit(width: 400, height: 400), source: (3000, 4000), output: (300, 400), crop: nil),
        Case(resize: .fill(width: 400, height: 400), source: (3000, 4000), output: (400, 400), crop: (0, 500, 3000, 3000)),
        Case(resize: .force(width: 400, height: 400), source: (3000, 4000), output: (400, 400), crop: nil),
        // Square.
        Case(resize: .fit(width: 400, height: 400), source: (1000, 1000), output: (400, 400), crop: nil),
        Case(resize: .fill(width: 400, height: 400), source: (1000, 1000), output: (400, 400), crop: (0, 0, 1000, 1000)),
        // 1×N and N×1.
        Case(resize: .fit(width: 400, height: 400), source: (1, 500), output: (1, 400), crop: nil),
        Case(resize: .fill(width: 400, height: 400), source: (1, 500), output: (1, 400), crop: (0, 50, 1, 400)),
        Case(resize: .fillDown(width: 400, height: 400), source: (1, 500), output: (1, 1), crop: (0, 249, 1, 1)),
        Case(resize: .force(width: 400, height: 400), source: (1, 500), output: (400, 400), crop: nil),
        Case(resize: .fit(width: 400, height: 400), source: (500, 1), output: (400, 1), crop: nil),
        Case(resize: .fill(width: 400, height: 400), source: (500, 1), output: (400, 1), crop: (50, 0, 400, 1)),
        Case(resize: .fillDown(width: 400, height: 400), source: (500, 1), output: (1, 1), crop: (249, 0, 1, 1)),
        // Smaller than the box, without and with enlarge.
        Case(resize: .fit(width: 400, height: 400), source: (300, 200), output: (300, 200), crop: nil),
        Case(resize: .fit(width: 400, height: 400, enlarge: true), source: (300, 200), output: (400, 267), crop: nil),
        Case(resize: .fill(width: 400, height: 400), source: (300, 200), output: (300, 200), crop: (0, 0, 300, 200)),
        Case(resize: .fill(width: 400, height: 400, enlarge: true), source: (300, 200), output: (400, 400), crop: (50, 0, 200, 200)),
        Case(resize: .fillDown(width: 400, height: 400), source: (300, 200), output: (200, 200), crop: (50, 0, 200, 200)),
        Case(resize: .force(width: 400, height: 400), source: (300, 200), output: (400, 400), crop: nil),
        // Smaller on one side only: fill cuts what exceeds the box; fill-down keeps the aspect.
        Case(resize: .fill(width: 400, height: 400), source: (500, 300), output: (400, 300), crop: (50, 0, 400, 300)),
        Case(resize: .fillDown(width: 400, height: 400), source: (500, 300), output: (300, 300), crop: (100, 0, 300, 300)),
        Case(resize: .fillDown(width: 400, height: 200), source: (300, 500), output: (300, 150), crop: (0, 175, 300, 150)),
        // fill-down with enlarge: exactly as without, whatever the shape (issue 39's sizes too).
        Case(resize: fillDownEnlarged(400, 400), source: (4000, 3000), output: (400, 400), crop: (500, 0, 3000, 3000)),
        Case(resize: fillDownEnlarged(400, 400), source: (3000, 4000), output: (400, 400), crop: (0, 500, 3000, 3000)),
        Case(resize: fillDownEnlarged(400, 400), source: (1000, 1000), output: (400, 400), crop: (0, 0, 1000, 1000)),
        Case(resize: fillDownEnlarged(400, 400), source: (1, 500), output: (1, 1), crop: (0, 249, 1, 1)),
        Case(resize: fillDownEnlarged(400, 400), source: (500, 1), output: (1, 1), crop: (249, 0, 1, 1)),
        Case(resize: fillDownEnlarged(400, 400), source: (300, 200), output: (200, 200), crop: (50, 0, 200, 200)),
        Case(resize: fillDownEnlarged(400, 400), source: (200, 300), output: (200, 200), crop: (0, 50, 200, 200)),
        Case(resize: fillDownEnlarged(400, 400), source: (500, 300), output: (300, 300), crop: (100, 0, 300, 300)),
        Case(resize: fillDownEnlarged(400, 200), source: (300, 500), output: (300, 150), crop: (0, 175, 300, 150)),
        Case(resize: fillDownEnlarged(1200, 1200), source: (1680, 1050), output: (1050, 1050), crop: (315, 0, 1050, 1050)),
        Case(resize: fillDownEnlarged(2000, 500), source: (1680, 1050), output: (1680, 420), crop: (0, 315, 1680, 420)),
        Case(resize: fillDownEnlarged(2000, 500), source: (1200, 1), output: (4, 1), crop: (598, 0, 4, 1)),
        // A zero side: fit by the other one only.
        Case(resize: .fit(width: 400, height: 0), source: (4000, 3000), output: (400, 300), crop: nil),
        Case(resize: .fit(width: 0, height: 300), source: (4000, 3000), output: (400, 300), crop: nil),
        Case(resize: .fit(width: 0, height: 300), source: (3000, 4000), output: (225, 300), crop: nil),
        // A box of another shape: the side that binds keeps the whole source.
        Case(resize: .fill(width: 300, height: 400), source: (4000, 3000), output: (300, 400), crop: (875, 0, 2250, 3000)),
        Case(resize: .fill(width: 400, height: 100), source: (4000, 3000), output: (400, 100), crop: (0, 1000, 4000, 1000)),
        // An odd margin is split into two half pixels, not rounded.
        Case(resize: .fill(width: 100, height: 100), source: (401, 300), output: (100, 100), crop: (50.5, 0, 300, 300))
    ]

    @Test("every mode over landscape, portrait, square, 1×N, N×1 and small sources", arguments: cases)
    func sizes(_ example: Case) throws {
        try example.resize.validate()
        let plan = ResizePlan(example.resize, sourceWidth: example.source.0, sourceHeight: example.source.1)
        #expect((plan.width, plan.height) == example.output)
        let crop = example.crop ?? (0, 0, Double(example.source.0), Double(example.source.1))
        #expect(plan.crop == PixelRect(x: crop.0, y: crop.1, width: crop.2, height: crop.3), "\(plan.crop)")
    }

    @Test("gravity places the crop against the edge or corner it names, or around the focus point")
    func gravityOffsets() {
        // A 4000×3000 source filled into 400×400: a 3000×3000 crop with 1000 px to spare horizontally.
        let expected: [(Gravity, Double)] = [
            (.centre, 500), (.north, 500), (.south, 500), (.west, 0), (.northWest, 0), (.southWest, 0),
            (.east, 1000), (.northEast, 1000), (.southEast, 1000),
            (.focus(x: 0.5, y: 0.5), 500), (.focus(x: 0.3, y: 0.9), 0), (.focus(x: 0.6, y: 0), 900), (.focus(x: 1, y: 1), 1000)
        ]
        for (gravity, x) in expected {
            let plan = ResizePlan(.fill(width: 400, height: 400, gravity: gravity), sourceWidth: 4000, sourceHeight: 3000)
            #expect(plan.crop.x == x && plan.crop.y == 0, "\(gravity): \(plan.crop)")
        }
        // The same, vertically: 3000×4000 leaves 1000 px to spare.
        let vertical: [(Gravity, Double)] = [
            (.north, 0), (.northEast, 0), (.centre, 500), (.east, 500), (.south, 1000), (.southWest, 1000),
            (.focus(x: 0, y: 0.25), 0), (.focus(x: 0, y: 0.55), 700)
        ]
        for (gravity, y) in vertical {
            let plan = ResizePlan(.fill(width: 400, height: 400, gravity: gravity), sourceWidth: 3000, sourceHeight: 4000)
            #expect(plan.crop.y == y && plan.crop.x == 0, "\(gravity): \(plan.crop)")
        }
    }

    @Test("equal resizes are equal: gravity means nothing to fit and force, enlarge nothing to force")
    func normalisation() {
        #expect(Resize.fit(width: 10, height: 20) == Resize(mode: .fit, width: 10, height: 20, gravity: .north))
        #expect(Resize.force(width: 10, height: 20) == Resize(mode: .force, width: 10, height: 20, gravity: .east, enlarge: true))
        #expect(Resize.fillDown(width: 10, height: 20) != Resize.fill(width: 10, height: 20))
        #expect(Resize(mode: .fillDown, width: 10, height: 20, enlarge: true) == Resize.fillDown(width: 10, height: 20))
        #expect(Resize.maxPixelSize(400) == .fit(width: 400, height: 400))
        #expect(Resize.fit(width: 400, height: 400).maxPixelSize == 400)
        #expect(Resize.fit(width: 400, height: 300).maxPixelSize == nil && Resize.fill(width: 400, height: 400).maxPixelSize == nil)
        #expect(Resize.fit(width: 1080, height: 1080).description == "fit:1080x1080")
        #expect(
            Resize.fill(width: 400, height: 300, gravity: .focus(x: 0.25, y: 0.5), enlarge: true).description
                == "fill:400x300:focus:0.25,0.5:enlarge")
        #expect(Resize.fillDown(width: 4, height: 3, gravity: .southWest).description == "fill-down:4x3:south-west")
    }

    @Test("gravity text forms parse and print back")
    func gravityText() {
        for gravity in [Gravity.centre, .north, .south, .east, .west, .northEast, .northWest, .southEast, .southWest, .focus(x: 0.25, y: 1)] {
            #expect(Gravity(gravity.description) == gravity)
        }
        #expect(Gravity("center") == .centre)
        for bad in [
            "", "up", "North", "focus:", "focus:0.5", "focus:0.5,", "focus:1.5,0.5", "focus:0.5,-0.1", "focus:nan,0.5",
            "focus:0.5,0.5,0.5", "ce"
        ] {
            #expect(Gravity(bad) == nil, "\(bad)")
        }
    }

    @Test("invalid boxes are refused: negative, zero where a side is needed, above the limit, focus outside 0…1")
    func validation() {
        let bad: [Resize] = [
            .fit(width: 0, height: 0), .fit(width: -1, height: 10), .fill(width: 0, height: 10), .fill(width: 10, height: 0),
            .fillDown(width: 0, height: 10), .force(width: 10, height: 0), .fit(width: 100_001, height: 10),
            .fill(width: 10, height: 10, gravity: .focus(x: 1.5, y: 0))
        ]
        for resize in bad {
            #expect(throws: ImageCodecError.self, "\(resize)") { try resize.validate() }
        }
        #expect(throws: Never.self) { try Resize.fit(width: 0, height: 10).validate() }
        #expect(throws: Never.self) { try Resize.fill(width: 100_000, height: 1).validate() }
    }

    @Test("a plan moves to stored coordinates for every orientation: the crop covers the same pixels")
    func storedPlans() throws {
        // An upright 300×400 image (so stored 400×300 for the orientations that swap), filled
        // into 100×100 keeping the top: the upright crop is (0, 0, 300, 300).
        let upright = ResizePlan(.fill(width: 100, height: 100, gravity: .north), sourceWidth: 300, sourceHeight: 400)
        #expect(upright.crop == PixelRect(x: 0, y: 0, width: 300, height: 300))
        for orientation in ExifOrientation.allCases {
            let (storedWidth, storedHeight) = orientation.swapsDimensions ? (400, 300) : (300, 400)
            let stored = upright.stored(orientation, storedWidth: storedWidth, storedHeight: storedHeight)
            // Which stored pixel shows at upright (x, y), from the bitmap rotation itself.
            let marker = try TestImages.make(width: storedWidth, height: storedHeight, format: .gray) { x, y in
                let inside = Double(x) >= stored.crop.x && Double(x) < stored.crop.maxX && Double(y) >= stored.crop.y && Double(y) < stored.crop.maxY
                return [inside ? 255 : 0]
            }.applying(orientation)
            #expect(marker.width == 300 && marker.height == 400)
            #expect(Array(marker.pixel(x: 0, y: 0)) == [255] && Array(marker.pixel(x: 299, y: 299)) == [255], "\(orientation)")
            #expect(Array(marker.pixel(x: 0, y: 300)) == [0] && Array(marker.pixel(x: 299, y: 399)) == [0], "\(orientation)")
        }
    }

    @Test("minimum sizes scale the source up to them (past enlarge) and crop to the box by the gravity; at or below the box's scale they do nothing")
    func minimumSizes() {
        func resize(_ mode: Resize.Mode, _ width: Int, _ height: Int, gravity: Gravity = .centre, minimum: (Int, Int)) -> Resize {
            Resize(mode: mode, width: width, height: height, gravity: gravity, minimumWidth: minimum.0, minimumHeight: minimum.1)
        }
        let cases: [(Resize, source: (Int, Int), size: (Int, Int), crop: PixelRect)] = [
            // 4000×2000 into 400×400 fits at 0.1; 800 wide is 0.2: 800×400, cropped to 400×400, the middle 2000×2000.
            (resize(.fit, 400, 400, minimum: (800, 0)), (4000, 2000), (400, 400), PixelRect(x: 1000, y: 0, width: 2000, height: 2000)),
            (resize(.fit, 400, 400, gravity: .west, minimum: (800, 0)), (4000, 2000), (400, 400), PixelRect(x: 0, y: 0, width: 2000, height: 2000)),
            // No box: only the minimum, enlarging a small source.
            (resize(.fit, 0, 0, minimum: (0, 300)), (200, 100), (600, 300), PixelRect(x: 0, y: 0, width: 200, height: 100)),
            (resize(.fit, 0, 0, minimum: (100, 0)), (200, 100), (200, 100), PixelRect(x: 0, y: 0, width: 200, height: 100)),
            // A fill at 0.2 (400×400 of 2000×2000); at least 1200 high is 0.6: the middle 666.7 square.
            (
                resize(.fill, 400, 400, minimum: (0, 1200)), (2000, 2000), (400, 400),
                PixelRect(x: 1000 - 200 / 0.6, y: 1000 - 200 / 0.6, width: 400 / 0.6, height: 400 / 0.6)
            ),
            // At the box's own scale: the plain fit.
            (resize(.fit, 400, 400, minimum: (400, 0)), (4000, 2000), (400, 200), PixelRect(x: 0, y: 0, width: 4000, height: 2000))
        ]
        for (resize, source, size, crop) in cases {
            let plan = ResizePlan(resize, sourceWidth: source.0, sourceHeight: source.1)
            #expect((plan.width, plan.height) == size, "\(resize)")
            #expect(abs(plan.crop.x - crop.x) < 1e-6 && abs(plan.crop.y - crop.y) < 1e-6, "\(resize): \(plan.crop)")
            #expect(abs(plan.crop.width - crop.width) < 1e-6 && abs(plan.crop.height - crop.height) < 1e-6, "\(resize): \(plan.crop)")
        }
        // Force makes exactly its box: no minimum; a minimum makes a fit's gravity count, and is keyed.
        #expect(resize(.force, 10, 10, minimum: (50, 50)).minimumWidth == 0)
        #expect(resize(.fit, 10, 10, gravity: .west, minimum: (50, 0)).description == "fit:10x10:west:min:50x0")
        #expect(Resize.fit(width: 10, height: 10).description == "fit:10x10")
    }
}
