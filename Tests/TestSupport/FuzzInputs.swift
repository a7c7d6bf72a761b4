import Foundation

/// A fuzz target's committed seeds (`Fuzz/Corpus/TARGET`) and every input it ever flagged
/// (`Tests/Fixtures/fuzz-regressions/TARGET`), for the regression tests that replay them.
public enum FuzzInputs {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The files for `target`, by name (`FOLDER/TARGET/NAME`). A folder that does not exist
    /// holds nothing (not every target has regressions); one that cannot be read is an error.
    public static func files(for target: String) throws -> [(name: String, data: Data)] {
        try ["Fuzz/Corpus", "Tests/Fixtures/fuzz-regressions"].flatMap { folder -> [(name: String, data: Data)] in
            let directory = root.appendingPathComponent(folder).appendingPathComponent(target)
            guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
            return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted().map { name in
                ("\(folder)/\(target)/\(name)", try Data(contentsOf: directory.appendingPathComponent(name)))
            }
        }
    }
}
