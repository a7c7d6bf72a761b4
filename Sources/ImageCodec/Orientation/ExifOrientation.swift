/// The eight EXIF orientations: how the stored pixels must be transformed to appear upright.
public enum ExifOrientation: Int, Sendable, Hashable, CaseIterable {
    /// Stored upright.
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Rotated 180°.
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal.
    case leftMirrored = 5
    /// Needs a 90° clockwise rotation to be upright (typical portrait phone photo).
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal.
    case rightMirrored = 7
    /// Needs a 90° counter-clockwise rotation to be upright.
    case left = 8

    /// True for the orientations that exchange width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The orientation whose transform turns an image clockwise by `degrees` (any multiple of
    /// 90, negative counter-clockwise; others are `.up`): `bitmap.applying(.init(clockwise: 90))`.
    public init(clockwise degrees: Int) {
        switch (degrees % 360 + 360) % 360 {
        case 90: self = .right
        case 180: self = .down
        case 270: self = .left
        default: self = .up
        }
    }
}

extension ExifOrientation {
    /// The orientation HEIF's transformations come to: `rotation` quarter turns anticlockwise
    /// (`irot`), then a mirror (`imir`: 0 exchanges top and bottom, 1 left and right, nil
    /// none), as ISO/IEC 23008-12 orders them.
    init(heifRotation rotation: Int, mirror: Int?) {
        let turns = ((rotation % 4) + 4) % 4
        switch mirror {
        case nil: self = [.up, .left, .down, .right][turns]
        case 0: self = [.downMirrored, .leftMirrored, .upMirrored, .rightMirrored][turns]
        default: self = [.upMirrored, .rightMirrored, .downMirrored, .leftMirrored][turns]
        }
    }
}
