import ArgumentParser
import ImageCodec

/// `--size WxH [--mode M] [--gravity G] [--enlarge]` and the older `--max-pixel-size N`: what
/// size `thumbnail` and `fetch` make, parsed into the one `Resize` the library takes; and
/// `--fast-shrink-on-load`, how a JPEG or WebP gets there.
struct ResizeArguments: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Box to resize into, in the upright image's pixels: WxH (a 0 side, fit only: any).",
            valueName: "WxH"))
    var size: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "fit (inside the box, aspect kept), fill (exactly the box, cropped), fill-down (fill, never enlarged, even with --enlarge), force (exactly the box, aspect not kept).",
            valueName: "mode"))
    var mode: Resize.Mode = .fit

    @Option(
        name: .long,
        help: ArgumentHelp(
            "What fill keeps: centre, north, south, east, west, north-east, north-west, south-east, south-west, focus:X,Y (0-1), or smart (attention: edges, skin tones, red).",
            valueName: "gravity"))
    var gravity: Gravity = .centre

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Move what --gravity places (a fill's crop, --crop, the image on an --extend canvas) by X,Y: right and down positive (--offset=-20,0 for a negative X), pixels from 1 on (the output's; the image's for --crop), a fraction of the side below 1.",
            valueName: "X,Y"))
    var offset: String?

    @Flag(name: .long, help: "Let fit and fill scale a smaller source up (fill-down never does).")
    var enlarge = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Scale the source to at least this size, enlarging if need be, then crop to --size (imgproxy's min-width and min-height): WxH, a 0 side: none.",
            valueName: "WxH"))
    var minSize: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Longest side of the output in pixels: the same as --size NxN --mode fit (default: keep the size).",
            valueName: "n"))
    var maxPixelSize: Int?

    @Flag(
        name: .long,
        help: "JPEG and WebP: decode at the smallest scale that still covers the size, as imgproxy and sharp do (faster, slightly softer).")
    var fastShrinkOnLoad = false

    func validate() throws {
        _ = try resize()
        _ = try gravityOffset()
    }

    /// `--offset X,Y` (zero without it).
    func gravityOffset() throws -> GravityOffset {
        guard let offset else { return .zero }
        let values = offset.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard values.count == 2, let x = values[0], let y = values[1] else {
            throw ValidationError("--offset must be X,Y with numbers, e.g. 20,0 or -0.1,0, got '\(offset)'")
        }
        let move = GravityOffset(x: x, y: y)
        do {
            try move.validate()
        } catch {
            throw ValidationError("--offset \(offset): \(Self.reason(error))")
        }
        return move
    }

    /// The resize asked for, nil for full size; a usage mistake throws a `ValidationError` that
    /// names the option.
    func resize() throws -> Resize? {
        if let maxPixelSize {
            guard size == nil else {
                throw ValidationError("--max-pixel-size and --size cannot both be given (--max-pixel-size N is --size NxN --mode fit)")
            }
            guard mode == .fit else { throw ValidationError("--mode \(mode.rawValue) needs --size (--max-pixel-size always fits)") }
            guard maxPixelSize >= 1 else { throw ValidationError("--max-pixel-size must be at least 1, got \(maxPixelSize)") }
        }
        var minimum = (width: 0, height: 0)
        if let minSize {
            guard let sides = Self.sides(minSize), sides.width >= 0, sides.height >= 0 else {
                throw ValidationError("--min-size must be WxH with whole numbers, e.g. 800x0, got '\(minSize)'")
            }
            guard mode != .force else { throw ValidationError("--min-size does not apply to --mode force, which makes exactly --size") }
            minimum = sides
        }
        guard let text = size ?? maxPixelSize.map({ "\($0)x\($0)" }) else {
            if mode != .fit { throw ValidationError("--mode \(mode.rawValue) needs --size") }
            guard minimum != (0, 0) else { return nil }
            return try Self.validated(
                Resize(mode: .fit, width: 0, height: 0, minimumWidth: minimum.width, minimumHeight: minimum.height), "--min-size \(minSize ?? "")")
        }
        guard let (width, height) = Self.sides(text) else {
            throw ValidationError("--size must be WxH with whole numbers, e.g. 400x400 or 400x0, got '\(text)'")
        }
        let resize = Resize(
            mode: mode, width: width, height: height, gravity: gravity, enlarge: enlarge, minimumWidth: minimum.width,
            minimumHeight: minimum.height, offset: try gravityOffset())
        return try Self.validated(resize, "--size \(text) with --mode \(mode.rawValue)")
    }

    /// `WxH` as two whole numbers.
    private static func sides(_ text: String) -> (width: Int, height: Int)? {
        let sides = text.split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, let width = Int(sides[0]), let height = Int(sides[1]) else { return nil }
        return (width, height)
    }

    private static func validated(_ resize: Resize, _ what: String) throws -> Resize {
        do {
            try resize.validate()
        } catch {
            throw ValidationError("\(what): \(Self.reason(error))")
        }
        return resize
    }

    private static func reason(_ error: ImageCodecError) -> String {
        if case .invalidArgument(let message) = error { return message }
        return error.description
    }
}

extension Resize.Mode: ExpressibleByArgument {}
extension Gravity: ExpressibleByArgument {}
