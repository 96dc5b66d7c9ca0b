import Foundation

exit(MoonmockCLI.main(Array(CommandLine.arguments.dropFirst())))
