; Inno Setup script: the Windows installer for LLM Hardware Advisor.
; Build after PyInstaller:  iscc /DAppVersion=0.1.0 packaging\windows\advisor.iss
; Output: dist\LLM-Hardware-Advisor-<version>-windows-x64-setup.exe

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif

[Setup]
AppId={{6F1C2B3A-8E54-4C6B-9B7A-2D3E4F5A6B7C}
AppName=LLM Hardware Advisor
AppVersion={#AppVersion}
AppPublisher=LLM Hardware Advisor
DefaultDirName={autopf}\LLM Hardware Advisor
DefaultGroupName=LLM Hardware Advisor
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir=..\..\dist
OutputBaseFilename=LLM-Hardware-Advisor-{#AppVersion}-windows-x64-setup
SetupIconFile=..\advisor.ico
UninstallDisplayIcon={app}\advisor.exe
Compression=lzma2/max
SolidCompression=yes
ArchitecturesInstallIn64BitMode=x64compatible
WizardStyle=modern
; the app's own license (MIT) on the license page; the third-party notices the build wrote
; into the bundle (Qt under the LGPL-3.0 and where its source is, llama.cpp, every Python
; package) on the page before installing; both are installed beside the app too
LicenseFile=..\..\LICENSE
InfoBeforeFile=..\..\dist\advisor\THIRD_PARTY_NOTICES.txt

[Files]
Source: "..\..\dist\advisor\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{group}\LLM Hardware Advisor"; Filename: "{app}\advisor.exe"
Name: "{group}\Uninstall LLM Hardware Advisor"; Filename: "{uninstallexe}"
Name: "{autodesktop}\LLM Hardware Advisor"; Filename: "{app}\advisor.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked

[Registry]
; "Open with" for .gguf files
Root: HKCU; Subkey: "Software\Classes\Applications\advisor.exe\shell\open\command"; ValueType: string; ValueData: """{app}\advisor.exe"" gui ""%1"""; Flags: uninsdeletekey

[Run]
Filename: "{app}\advisor.exe"; Description: "Start LLM Hardware Advisor"; Flags: nowait postinstall skipifsilent
