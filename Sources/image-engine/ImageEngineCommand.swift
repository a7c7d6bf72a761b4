import ArgumentParser
import Foundation

/// `image-engine`: thumbnails, inspection, upload compression and cache maintenance.
@main
struct ImageEngineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image-engine",
        abstract: "Decode JPEG, PNG, WebP, HEIC and AVIF at the size shown; encode JPEG, PNG, WebP and AVIF.",
        discussion: """
            Errors: one line on stderr naming the file or option, or, where a command prints JSON, \
            one JSON record on stdout (see each command's help). Exit status: 0 success, 1 an \
            operation or input failed, 64 a usage mistake.
            """,
        version: ImageEngineCommand.version,
        subcommands: [
            InspectCommand.self, ThumbnailCommand.self, CompressCommand.self, FetchCommand.self, CacheCommand.self, ServeCommand.self,
            SignCommand.self
        ]
    )

    /// Printed by `--version`: the last release, and whether this build is past it. A build
    /// from `main` after a release says so (SemVer's build metadata, `+main`), so a bug report
    /// never passes off unreleased code as the release. The release commit sets it to the bare
    /// version; the next commit adds `+main` again.
    static let version = "0.6.0+main (unreleased changes after 0.6.0; see CHANGELOG.md)"

    /// ArgumentParser's `main`, but a usage mistake is one line on stderr naming the option
    /// (`image-engine: ...`, exit 64) rather than a message, a help line and a usage block.
    static func main() async {
        do {
            var command = try parseAsRoot()
            // Before the first await: no thread but this one has an allocator arena yet.
            if command is ThumbnailCommand { MallocTuning.batch() }
            if command is ServeCommand { MallocTuning.service() }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                let message = self.message(for: error).split(separator: "\n").first.map(String.init) ?? "usage mistake"
                Output.error(message + " (see --help)")
                Foundation.exit(ExitCode.validationFailure.rawValue)
            }
            exit(withError: error)
        }
    }
}
