import Foundation

/// The repository's `SampleImages/` folder: real photos under free licences.
public enum SampleImages {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleImages")

    public static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    public static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }
}

/// Sample photos reduced to 480 px (`Tests/Fixtures/small-photos`, see its README): real photo
/// content that decodes quickly in a debug build, for tests about everything but the codec.
public enum SmallPhotos {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/small-photos")

    /// kite.jpg, ladybird.jpg, grey.jpg (gray) and calla.png (with alpha).
    public static let names = ["kite.jpg", "ladybird.jpg", "grey.jpg", "calla.png"]

    public static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }
}
