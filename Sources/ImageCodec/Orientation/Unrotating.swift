// A box, a gravity, a move and a region said of an image that is then turned clockwise by a
// multiple of 90° (imgproxy's `rotate`, `thumbnail --rotate`), restated for the image before
// the turn, where the decoder works: the decoder crops and resizes, the turn comes after.
// Turning by 90° clockwise brings the left edge to the top, so the output's north is the
// source's west, and a move right becomes a move up.

extension Gravity {
    /// Where this gravity of the image turned clockwise by `degrees` (a multiple of 90) lies
    /// in the image before the turn.
    public func unrotated(by degrees: Int) -> Gravity {
        let quarters = (degrees % 360 + 360) % 360 / 90
        guard quarters != 0 else { return self }
        if case .focus(let x, let y) = self {
            let point: (Double, Double) =
                switch quarters {
                case 1: (y, 1 - x)
                case 2: (1 - x, 1 - y)
                default: (1 - y, x)
                }
            return .focus(x: point.0, y: point.1)
        }
        // One quarter turn counter-clockwise, as many times as the turn has quarters.
        let counterClockwise: [Gravity: Gravity] = [
            .north: .west, .west: .south, .south: .east, .east: .north,
            .northEast: .northWest, .northWest: .southWest, .southWest: .southEast, .southEast: .northEast
        ]
        var result = self
        for _ in 0..<quarters { result = counterClockwise[result] ?? result }
        return result
    }
}

extension GravityOffset {
    /// This move, said of the image turned clockwise by `degrees`, in the image before the turn.
    public func unrotated(by degrees: Int) -> GravityOffset {
        switch (degrees % 360 + 360) % 360 {
        case 90: GravityOffset(x: y, y: -x)
        case 180: GravityOffset(x: -x, y: -y)
        case 270: GravityOffset(x: -y, y: x)
        default: self
        }
    }
}

extension Resize {
    /// This resize, said of the image turned clockwise by `degrees`, for the image before the
    /// turn: the box's and the minimum's sides exchanged by a quarter turn, the gravity and
    /// its move turned back.
    public func unrotated(by degrees: Int) -> Resize {
        let quarter = (degrees % 180 + 180) % 180 == 90
        return Resize(
            mode: mode, width: quarter ? height : width, height: quarter ? width : height, gravity: gravity.unrotated(by: degrees),
            enlarge: enlarge, minimumWidth: quarter ? minimumHeight : minimumWidth, minimumHeight: quarter ? minimumWidth : minimumHeight,
            offset: offset.unrotated(by: degrees))
    }
}

extension CropRegion {
    /// This region, said of the image turned clockwise by `degrees`, in the image before the turn.
    public func unrotated(by degrees: Int) -> CropRegion {
        let quarter = (degrees % 180 + 180) % 180 == 90
        return CropRegion(
            width: quarter ? height : width, height: quarter ? width : height, gravity: gravity.unrotated(by: degrees),
            offset: offset.unrotated(by: degrees))
    }
}
