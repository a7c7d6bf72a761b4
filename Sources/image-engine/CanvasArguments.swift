import ArgumentParser
import ImageCodec

/// `--extend [--background C] [--padding T,R,B,L]` and `--extend-aspect-ratio W:H`: what
/// `thumbnail` puts around the resized image, parsed into the one `Canvas` the library takes
/// (imgproxy's `ex`, `exar`, `pd` and `bg`).
struct CanvasArguments: ParsableArguments {
    @Flag(name: .long, help: "Place a result smaller than --size on the whole box, at --gravity (a white square tile around any photo).")
    var extend = false

    @Option(
        name: .long,
        help: ArgumentHelp("Extend the result to this aspect ratio instead, at --gravity: W:H, e.g. 1:1 or 4:5.", valueName: "W:H"))
    var extendAspectRatio: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Pixels added around the result, CSS order: T, T,R, T,R,B or T,R,B,L (the top stands for sides left out, the right for the left).",
            valueName: "T,R,B,L"))
    var padding: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Colour of what --extend and --padding add, and under transparency: RRGGBB (default: transparent, white in JPEG).",
            valueName: "RRGGBB"))
    var background: String?

    /// The canvas asked for; `size` is the box of `--size` (for `--extend`), `gravity` where
    /// the image goes. A usage mistake throws a `ValidationError` naming the option.
    func canvas(size: Resize?, gravity: Gravity) throws -> Canvas {
        var canvas = Canvas(gravity: gravity)
        if extend {
            guard let size, size.width > 0 || size.height > 0 else { throw ValidationError("--extend needs --size (the box to extend to)") }
            guard extendAspectRatio == nil else { throw ValidationError("--extend and --extend-aspect-ratio cannot both be given") }
            canvas.extend = .size(width: size.width, height: size.height)
        }
        if let extendAspectRatio {
            let sides = extendAspectRatio.split(separator: ":", omittingEmptySubsequences: false).compactMap { Int($0) }
            guard sides.count == 2, (1...Canvas.maximumSide).contains(sides[0]), (1...Canvas.maximumSide).contains(sides[1]) else {
                throw ValidationError("--extend-aspect-ratio must be W:H with whole numbers from 1, e.g. 1:1, got '\(extendAspectRatio)'")
            }
            canvas.extend = .aspectRatio(width: sides[0], height: sides[1])
        }
        if let padding {
            let sides = padding.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...4).contains(sides.count), sides.allSatisfy({ $0.map { (0...Canvas.maximumSide).contains($0) } ?? false }) else {
                throw ValidationError("--padding must be 1 to 4 whole numbers 0-\(Canvas.maximumSide), comma-separated, got '\(padding)'")
            }
            canvas.padding = Canvas.Insets(cssOrder: sides)
        }
        if let background {
            guard let colour = RGBColor(hex: background) else {
                throw ValidationError("--background must be RRGGBB, e.g. ffffff, got '\(background)'")
            }
            canvas.background = colour
        }
        return canvas
    }
}
