/// Naive CMYK → RGB, as browsers and libvips do without a colour-management system: used for
/// CMYK JPEGs that carry no usable profile.
enum CMYKConversion {
    /// `inverted`: Adobe writes CMYK (and YCCK, which libjpeg turns into CMYK) with 0 meaning
    /// full ink; without the Adobe marker, 255 means full ink.
    static func toRGB(_ cmyk: UnsafePointer<UInt8>, inverted: Bool, into rgb: UnsafeMutablePointer<UInt8>, count: Int) {
        for pixel in 0..<count {
            var c = UInt32(cmyk[pixel * 4]), m = UInt32(cmyk[pixel * 4 + 1])
            var y = UInt32(cmyk[pixel * 4 + 2]), k = UInt32(cmyk[pixel * 4 + 3])
            if !inverted { (c, m, y, k) = (255 - c, 255 - m, 255 - y, 255 - k) }
            rgb[pixel * 3] = UInt8((c * k + 127) / 255)
            rgb[pixel * 3 + 1] = UInt8((m * k + 127) / 255)
            rgb[pixel * 3 + 2] = UInt8((y * k + 127) / 255)
        }
    }
}
