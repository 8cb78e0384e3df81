/** Entry point: take the token out of the URL first, then render. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { captureTokenFromUrl } from './api/tokens.ts';
import { App } from './app/App.tsx';
import './styles.css';

captureTokenFromUrl();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
