import { render } from 'preact';
import { App } from './app.js';
import './console.css';
import { numberEntries } from './unsaved.js';

// Before the first render, so that every entry of the tab's history is numbered (Cancel, leaving a form unsaved, returns to it).
numberEntries();

render(<App />, document.getElementById('app')!);
