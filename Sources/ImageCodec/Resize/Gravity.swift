/// Which part of an image a fill keeps when it has to crop: the centre, an edge or a corner, or
/// the area around a point of interest. Directions refer to the upright image (after EXIF
/// orientation): north is the top of what the user sees.
///
/// Its text form is what the CLI's `--gravity` takes: `centre` (or `center`), `north`, `south`,
/// `east`, `west`, `north-east`, `north-west`, `south-east`, `south-west`, `smart`, or
/// `focus:X,Y`.
public enum Gravity: Sendable, Hashable, LosslessStringConvertible {
    /// Keep the middle (the default).
    case centre
    /// Keep the top edge.
    case north
    /// Keep the bottom edge.
    case south
    /// Keep the right edge.
    case east
    /// Keep the left edge.
    case west
    /// Keep the top-right corner.
    case northEast
    /// Keep the top-left corner.
    case northWest
    /// Keep the bottom-right corner.
    case southEast
    /// Keep the bottom-left corner.
    case southWest
    /// Centre the crop on the point (`x`, `y`), in fractions 0…1 of the upright image's width
    /// and height ((0, 0) is the top-left corner), as far as the image allows: a point near an
    /// edge gives a crop against that edge.
    case focus(x: Double, y: Double)
    /// Keep what draws the eye: edges, skin tones and red, found on a small decode
    /// of the image before the real one (libvips' and imgproxy's "attention" smart crop). It
    /// decides where a fill crops; where nothing is cropped, or where a result is placed on a
    /// canvas (no pixels to look at), it is the centre.
    case smart

    /// Parses the text form (see the type's documentation); nil for anything else, including a
    /// focus point outside 0…1 or not a finite number.
    public init?(_ description: String) {
        if let named = Self.named[description] {
            self = named
            return
        }
        guard description.hasPrefix("focus:") else { return nil }
        let coordinates = description.dropFirst("focus:".count).split(separator: ",", omittingEmptySubsequences: false)
        guard coordinates.count == 2, let x = Double(coordinates[0]), let y = Double(coordinates[1]),
            let point = Gravity.focusPoint(x: x, y: y)
        else { return nil }
        self = point
    }

    /// A focus point, or nil when a coordinate is outside 0…1 or not a finite number.
    public static func focusPoint(x: Double, y: Double) -> Gravity? {
        guard (0...1).contains(x), (0...1).contains(y) else { return nil }
        return .focus(x: x, y: y)
    }

    public var description: String {
        switch self {
        case .centre: "centre"
        case .north: "north"
        case .south: "south"
        case .east: "east"
        case .west: "west"
        case .northEast: "north-east"
        case .northWest: "north-west"
        case .southEast: "south-east"
        case .southWest: "south-west"
        case .focus(let x, let y): "focus:\(x),\(y)"
        case .smart: "smart"
        }
    }

    private static let named: [String: Gravity] = [
        "centre": .centre, "center": .centre, "north": .north, "south": .south, "east": .east, "west": .west,
        "north-east": .northEast, "north-west": .northWest, "south-east": .southEast, "south-west": .southWest, "smart": .smart
    ]

    /// Where a span of `length` goes inside `0..<total`, on each axis: the offset of the span's
    /// start. Edges put it flush against their side; a focus point centres it on the point and
    /// then pushes it back inside.
    func offset(length: Double, total: Double, axis: Axis, shift: Double = 0) -> Double {
        let free = max(0, total - length)
        return min(max(anchored(length: length, total: total, axis: axis) + shift, 0), free)
    }

    /// `offset` before any shift.
    private func anchored(length: Double, total: Double, axis: Axis) -> Double {
        let free = max(0, total - length)
        let anchor: Double? =
            switch (self, axis) {
            case (.centre, _), (.smart, _), (.north, .horizontal), (.south, .horizontal), (.east, .vertical), (.west, .vertical): 0.5
            case (.west, .horizontal), (.northWest, .horizontal), (.southWest, .horizontal): 0
            case (.east, .horizontal), (.northEast, .horizontal), (.southEast, .horizontal): 1
            case (.north, .vertical), (.northEast, .vertical), (.northWest, .vertical): 0
            case (.south, .vertical), (.southEast, .vertical), (.southWest, .vertical): 1
            case (.focus, _): nil
            }
        if let anchor { return free * anchor }
        guard case .focus(let x, let y) = self else { return 0 }
        let point = (axis == .horizontal ? x : y) * total
        return min(max(point - length / 2, 0), free)
    }

    enum Axis { case horizontal, vertical }
}
