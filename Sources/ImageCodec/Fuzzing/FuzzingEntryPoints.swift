/// Internal parsers opened to the fuzz targets in `Fuzz/` (`@_spi(Fuzzing) import ImageCodec`):
/// not API, and absent from the documentation.
@_spi(Fuzzing)
public enum FuzzingEntryPoints {
    /// The EXIF orientation of a TIFF block (`ExifReader`), as its raw value.
    public static func exifOrientation(tiff bytes: [UInt8]) -> Int? {
        ExifReader.orientation(tiff: bytes)?.rawValue
    }

    /// The EXIF orientation of a JPEG APP1 payload ("Exif\0\0" + TIFF), as its raw value.
    public static func exifOrientation(app1 bytes: [UInt8]) -> Int? {
        ExifReader.orientation(app1: bytes)?.rawValue
    }
}
